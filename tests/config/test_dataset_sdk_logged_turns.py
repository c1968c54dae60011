"""A chat turn logged as OpenAI's SDK returns it (``message.model_dump()``: every field written,
``tool_calls``, ``function_call``, ``refusal``, ``audio`` null and ``annotations`` empty) is read as the
turn it is, and sent as ``{role, content}`` (QA: refused as "messages[1].function_call: tool calls
are not supported", though the turn calls nothing). A turn that does call a tool, or refuses, is
still refused naming the key."""

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

LOGGED = {"content": "Hello! How can I help?", "refusal": None, "role": "assistant", "annotations": [],
          "audio": None, "function_call": None, "tool_calls": None}


def _load(tmp_path, messages):
    (tmp_path / "d.jsonl").write_text(json.dumps({"messages": messages, "max_tokens": 64}) + "\n")
    return load_suite({"name": "t", "dataset": {"path": "d.jsonl"}}, tmp_path)


@pytest.mark.parametrize("turn", [LOGGED, {**LOGGED, "tool_calls": []}, {"role": "user", "content": "and you?",
                                                                          "tool_call_id": None}])
def test_a_turn_logged_with_empty_fields_is_read_as_its_role_and_content(tmp_path, turn):
    messages = [{"role": "user", "content": "hi there friend"}, turn, {"role": "user", "content": "tell me a joke"}]
    prompt = _load(tmp_path, messages).prompts[0]
    assert prompt.chat_messages() == [{"role": m["role"], "content": m["content"]} for m in messages]
    assert prompt.max_tokens == 64


@pytest.mark.parametrize("turn, key, says", [
    ({**LOGGED, "content": None, "tool_calls": [{"id": "c1", "type": "function",
                                                 "function": {"name": "f", "arguments": "{}"}}]},
     "tool_calls", "tool calls are not supported"),
    # (named with the jq line that makes its text the turn's content: test_dataset_rows_of_other_apis.py)
    ({**LOGGED, "refusal": "I cannot help with that."}, "refusal", "a turn logged as OpenAI's SDK returns it"),
])
def test_a_turn_that_calls_or_refuses_is_still_refused(tmp_path, turn, key, says):
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, [{"role": "user", "content": "hi there friend"}, turn])
    assert f"line 1: messages[1].{key}: {says}" in str(err.value)
