"""Chat datasets against SGLang 0.5.23's bench_serving readers (sglang/benchmark/datasets/
openai_dataset.py, sharegpt.py): a turn's ``name`` is kept and sent, as SGLang's reader sends a
row's turns as they are (QA: it was dropped); a conversation ending in the assistant's turn is sent
whole, as SGLang's reader does."""

from __future__ import annotations

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def _suite(tmp_path, rows, name="d.jsonl", **dataset):
    path = tmp_path / name
    if name.endswith(".json"):
        path.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    else:
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return load_suite({"name": "t", "dataset": {"path": str(path), **dataset}, "single": {"repeats": 1}})


def test_a_turns_name_is_kept_and_sent_and_a_turn_without_one_has_no_name_key(tmp_path):
    turns = [{"role": "system", "content": "Be brief."}, {"role": "user", "name": "alice", "content": "Name a colour."}]
    suite = _suite(tmp_path, [{"messages": turns, "max_tokens": 8}])
    assert suite.prompts[0].chat_messages() == turns
    stored = suite.to_dict()["prompts"][0]["messages"]
    assert stored == turns and load_suite(suite.to_dict()).prompts[0].chat_messages() == turns


@pytest.mark.parametrize("name", [3, "", None])
def test_a_name_that_is_not_text_is_refused_naming_the_turn(tmp_path, name):
    row = {"messages": [{"role": "user", "name": name, "content": "hi"}]}
    if name is None:  # JSON null: as absent
        assert _suite(tmp_path, [row]).prompts[0].chat_messages() == [{"role": "user", "content": "hi"}]
        return
    with pytest.raises(ConfigError) as err:
        _suite(tmp_path, [row])
    assert err.value.key == "line 1: messages[0].name" and "must be non-empty text" in err.value.message


def test_a_conversation_ending_in_the_assistants_turn_is_sent_whole(tmp_path):
    # SGLang 0.5.23's openai reader sends a row's messages as they are, and its server applies the
    # template with add_generation_prompt=True (serving_chat.py): the model answers after that turn
    turns = [{"role": "user", "content": "Name a colour."}, {"role": "assistant", "content": "Blue."}]
    suite = _suite(tmp_path, [{"messages": turns}])
    assert suite.prompts[0].chat_messages() == turns
    assert suite.prompts[0].max_tokens == 256  # default_max_tokens, as SGLang's reader's 256
