"""A JSONL row saved from SGLang's own /generate API (``GenerateReqInput``: ``text`` and
``sampling_params``) is named so, with the jq line that keeps its output length,
``sampling_params.max_new_tokens``, as ``max_tokens`` (tuner/config/dataset_fixes.py, ``_other_layout_fix``).
QA (qa152): it was "a text column, as Hugging Face text datasets have it" with ``jq -c '{prompt: .text}'``,
which drops the length: every request read at ``default_max_tokens`` (256), silently. What jq writes is
taken from jq's rules and read back as the request the row held; a Hugging Face text row is named as
before."""

from __future__ import annotations

import json
import shlex

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def _said(tmp_path, row) -> str:
    (tmp_path / "gen.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "gen.jsonl"}}, tmp_path)
    return str(err.value)


def test_a_generate_request_keeps_its_max_new_tokens(tmp_path):
    row = {"text": "Once upon a time", "sampling_params": {"max_new_tokens": 64, "temperature": 0}}
    data, lines = tmp_path / "gen.jsonl", tmp_path / "gen.lines.jsonl"
    jq = "{prompt: .text, max_tokens: .sampling_params.max_new_tokens}"
    assert _said(tmp_path, row) == (
        f"{data}: line 1: text: an SGLang /generate request (text, sampling_params): give the text as prompt "
        f"and sampling_params.max_new_tokens as max_tokens (jq -c '{jq}' {shlex.quote(str(data))} > "
        f"{shlex.quote(str(lines))} writes them so; give that file as dataset.path)")
    lines.write_text(json.dumps({"prompt": "Once upon a time", "max_tokens": 64}) + "\n")
    prompt = load_suite({"name": "t", "dataset": {"path": lines.name}}, tmp_path).prompts[0]
    assert (prompt.text, prompt.max_tokens) == ("Once upon a time", 64)


def test_a_text_column_is_named_as_before(tmp_path):
    said = "a text column, as Hugging Face text datasets have it: give it as prompt (jq -c '{prompt: .text}'"
    assert said in _said(tmp_path, {"text": "The quick brown fox"})
