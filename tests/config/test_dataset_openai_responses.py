"""A JSON-lines log of OpenAI API responses (``choices``, beside ``id``, ``object``, ``model``, ``usage``) is
said to hold no request, without a command (QA qa207: its ``model`` drew the logged request's line, ``jq -c
'{prompt, max_tokens}'``, which wrote ``{"prompt": null, "max_tokens": null}`` rows, refused next); a log of
each request beside its response (``{request: {...}, response: {...}}``) is given the ``jq`` line that makes
its requests the rows, and the file it writes is read with each request's own length."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

TURNS = [{"role": "user", "content": "Name three rivers of Europe."}]
RESPONSE = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Rhine, Danube, Loire."},
                         "finish_reason": "stop"}], "usage": {"prompt_tokens": 9, "completion_tokens": 6}}


def _load(folder: Path, name: str = "d.jsonl"):
    (folder / "s.yaml").write_text(json.dumps({"name": "s", "dataset": {"path": name},
                                               "single": {"prompts": 1, "repeats": 1}}))
    return load_suite(folder / "s.yaml")


def _refusal(folder: Path, rows: list[dict]) -> str:
    (folder / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ConfigError) as err:
        _load(folder)
    return str(err.value)


def test_a_log_of_responses_is_said_to_hold_no_request(tmp_path):
    assert _refusal(tmp_path, [RESPONSE]) == (
        f"{tmp_path / 'd.jsonl'}: line 1: choices: an OpenAI API response (choices: the model's reply, beside id, "
        "object, usage): it holds no request to send; give the requests that were sent, a prompt or messages object "
        "per line with its max_tokens")


def test_a_log_of_requests_beside_responses_gets_the_line_that_makes_the_requests(tmp_path):
    rows = [{"request": {"model": "m", "messages": TURNS, "max_completion_tokens": 48 + i}, "response": RESPONSE}
            for i in range(2)]
    line = _refusal(tmp_path, rows)
    assert line.startswith(f"{tmp_path / 'd.jsonl'}: line 1: request: a request logged under request beside its "
                           "response: the row is that request (jq -c "), line
    found = re.search(r"\((jq .*?) > (\S+) writes ", line)
    assert found, line
    out = Path(shlex.split(found.group(2))[0])
    with open(out, "wb") as f:  # run as printed (split here, not given to a shell)
        subprocess.run(shlex.split(found.group(1)), stdout=f, check=True, timeout=60)
    suite = _load(tmp_path, out.name)
    assert [(p.messages[0].content, p.max_tokens) for p in suite.prompts] == [(TURNS[0]["content"], 48),
                                                                              (TURNS[0]["content"], 49)]
