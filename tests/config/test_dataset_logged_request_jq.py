"""A row logged as an OpenAI request (``model``, ``temperature``, ... beside the request) is refused with a
jq line that keeps the request it holds (tuner/config/dataset_fixes.py, ``_request_of``): a completions log's
``prompt``, a chat log's ``messages``, and the output length a chat log gives as ``max_completion_tokens``
(the chat API's name now). QA (qa152): the line was always ``jq -c '{messages, max_tokens}'``, which
writes ``"messages": null`` for a completions log (its prompt lost; the file it makes is refused next)
and ``"max_tokens": null`` for a ``max_completion_tokens`` log (read as ``default_max_tokens``, 256:
every request measured at another length, silently). What jq writes is taken from jq's rules (``//``:
the first of the two not null) and read back as the request the row held."""

from __future__ import annotations

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

MESSAGES = [{"role": "user", "content": "Hello world!"}]


@pytest.mark.parametrize("row, jq, written", [
    ({"model": "m", "prompt": "Once upon a time", "max_tokens": 16}, "{prompt, max_tokens}",
     {"prompt": "Once upon a time", "max_tokens": 16}),
    ({"model": "m", "messages": MESSAGES, "max_completion_tokens": 64},
     "{messages, max_tokens: (.max_tokens // .max_completion_tokens)}",
     {"messages": MESSAGES, "max_tokens": 64}),
    ({"model": "m", "messages": MESSAGES, "max_tokens": 32}, "{messages, max_tokens}",  # as before
     {"messages": MESSAGES, "max_tokens": 32}),
], ids=["completions", "max_completion_tokens", "chat"])
def test_the_jq_line_keeps_the_logged_request(tmp_path, row, jq, written):
    (tmp_path / "log.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "log.jsonl"}}, tmp_path)
    said = (f"(jq -c '{jq}' {tmp_path / 'log.jsonl'} > {tmp_path / 'log.lines.jsonl'} writes them so; "
            "give that file as dataset.path)")
    assert str(err.value).endswith(said)
    (tmp_path / "log.lines.jsonl").write_text(json.dumps(written) + "\n")
    prompt = load_suite({"name": "t", "dataset": {"path": "log.lines.jsonl"}}, tmp_path).prompts[0]
    assert prompt.max_tokens == written["max_tokens"]
    read = prompt.text if "prompt" in written else [m.model_dump(exclude_none=True) for m in prompt.messages]
    assert read == written.get("prompt", written.get("messages"))
