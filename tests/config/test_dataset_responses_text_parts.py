"""A turn whose content is written as OpenAI's Responses API writes it -- ``[{"type": "input_text",
"text": ...}]`` for the user, ``output_text`` for the model -- is text under another name: the refusal
names it and the part type Chat Completions (which SGLang serves) reads, ``text``
(tuner/config/dataset.py, ``_text_parts``). QA (qa152): it was "'input_text' parts are not supported:
the tuner sends text requests; drop the part (or the row)", which calls a text part no text. An image
part is still refused as before."""

from __future__ import annotations

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def _said(tmp_path, messages) -> str:
    (tmp_path / "d.jsonl").write_text(json.dumps({"messages": messages}) + "\n")
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "d.jsonl"}}, tmp_path)
    return str(err.value)


@pytest.mark.parametrize("turn, kind", [(0, "input_text"), (1, "output_text")])
def test_a_responses_text_part_is_named_with_the_part_type_to_write(tmp_path, turn, kind):
    messages = [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
                {"role": "assistant", "content": [{"type": "text", "text": "hello"}]},
                {"role": "user", "content": "and then?"}]
    messages[turn]["content"][0]["type"] = kind
    assert _said(tmp_path, messages) == (
        f"{tmp_path / 'd.jsonl'}: line 1: messages[{turn}].content[0].type: {kind!r} is OpenAI's Responses "
        "API name for a text part, which Chat Completions calls 'text'; write it as 'text'")
    # the fix given makes the row read
    messages[turn]["content"][0]["type"] = "text"
    (tmp_path / "d.jsonl").write_text(json.dumps({"messages": messages}) + "\n")
    assert len(load_suite({"name": "t", "dataset": {"path": "d.jsonl"}}, tmp_path).prompts) == 1


def test_an_image_part_is_still_refused_as_no_text(tmp_path):
    said = _said(tmp_path, [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}])
    assert said.endswith("messages[0].content[0].type: 'image_url' parts are not supported: the tuner sends "
                         "text requests; drop the part (or the row)")
