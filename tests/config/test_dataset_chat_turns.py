"""Chat datasets against SGLang 0.5.23's bench_serving readers (sglang/benchmark/datasets/
openai_dataset.py, sharegpt.py): a turn's ``name`` is kept and sent, as SGLang's reader sends a
row's turns as they are (QA: it was dropped); a conversation ending in the assistant's turn is sent
whole, as SGLang's reader does; a CJK text's length is about a token a character, not four
characters a token (QA: a Chinese ShareGPT reply of N characters was a request of N/4 tokens)."""

from __future__ import annotations

import json

import pytest

from tuner.config.dataset import CHARS_PER_TOKEN, estimate_tokens
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


def test_a_cjk_replys_length_is_a_token_a_character(tmp_path):
    reply = "秋风起，落叶飞，" * 20
    conv = [{"id": "z", "conversations": [{"from": "human", "value": "写一首关于秋天的短诗。"},
                                          {"from": "gpt", "value": reply}]}]
    suite = _suite(tmp_path, conv, name="z.json")
    assert suite.prompts[0].max_tokens == len(reply) > round(len(reply) / CHARS_PER_TOKEN)
    capped = _suite(tmp_path, conv, name="z.json", max_output_tokens=100)
    assert capped.prompts[0].max_tokens == 100


def test_estimates_of_mixed_and_latin_text():
    latin = "Write a haiku about rain."
    assert estimate_tokens(latin) == round(len(latin) / CHARS_PER_TOKEN)
    assert estimate_tokens("你好" + latin) == 2 + round(len(latin) / CHARS_PER_TOKEN)
    assert estimate_tokens("안녕하세요") == 5 and estimate_tokens("こんにちは") == 5
    assert estimate_tokens("café") == 1 and estimate_tokens("") == 1
    # two CJK characters are a prompt of 2 tokens: kept by SGLang's "prompt_len < 2" rule
    assert estimate_tokens("你好") == 2


def test_a_sharegpt_file_keyed_conversation_reads_as_sglangs_reader_reads_it(tmp_path):
    # SGLang 0.5.23 sharegpt.py: data.get("conversations", data.get("conversation", []))
    turns = [{"from": "human", "value": "Write a haiku about rain, please."},
             {"from": "gpt", "value": "Rain on the tin roof, a long reply of many words."}]
    plural = _suite(tmp_path, [{"id": "a", "conversations": turns}], name="p.json")
    singular = _suite(tmp_path, [{"id": "a", "conversation": turns}], name="s.json")
    assert [p.model_dump() for p in singular.prompts] == [p.model_dump() for p in plural.prompts]
    assert singular.prompts[0].text == turns[0]["value"]
    with pytest.raises(ConfigError) as err:
        _suite(tmp_path, [{"id": "a", "conversation": [turns[0], {"from": "gpt", "value": None}]}], name="b.json")
    assert err.value.key == "[0].conversation[1]"
