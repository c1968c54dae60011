"""An OpenAI Batch API input line whose body gives the output length as ``max_completion_tokens`` (the
chat API's name for it now; ``max_tokens`` is deprecated there) is refused with a jq line that carries
that length into ``max_tokens`` (tuner/config/dataset_fixes.py, ``_other_layout_fix``). QA (qa152): the line
said ``jq -c '.body | {messages, max_tokens}'``, which writes ``"max_tokens": null``; the tuner reads
that as ``dataset.default_max_tokens`` (256), so every request of a file logged with 64 would be
measured at 256, silently. What jq writes is taken from jq's rules (``//``: the first of the two not
null) and read back as the request the row held."""

from __future__ import annotations

import json
import shlex

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

MESSAGES = [{"role": "user", "content": "Hello world!"}]
BATCH = {"custom_id": "request-1", "method": "POST", "url": "/v1/chat/completions",
         "body": {"model": "gpt-4o-mini", "messages": MESSAGES, "max_completion_tokens": 64}}


def test_the_jq_line_keeps_max_completion_tokens_as_the_length(tmp_path):
    data, lines = tmp_path / "batch.jsonl", tmp_path / "batch.lines.jsonl"
    data.write_text(json.dumps(BATCH) + "\n")
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": data.name}}, tmp_path)
    jq = ".body | {messages, max_tokens: (.max_tokens // .max_completion_tokens)}"
    command = f"jq -c '{jq}' {shlex.quote(str(data))} > {shlex.quote(str(lines))}"
    assert str(err.value) == (f"{data}: line 1: body: an OpenAI Batch API input line (custom_id, method, "
                              f"url, body): the request is its body ({command} writes them so; give that "
                              "file as dataset.path)")
    # jq writes max_tokens = .max_tokens // .max_completion_tokens = 64, which reads as the row's length
    lines.write_text(json.dumps({"messages": MESSAGES, "max_tokens": 64}) + "\n")
    prompt = load_suite({"name": "t", "dataset": {"path": lines.name}}, tmp_path).prompts[0]
    assert prompt.max_tokens == 64
