"""`format: custom`: SGLang 0.5.23's `bench_serving --dataset-name custom` layout, read as SGLang's
`benchmark/datasets/custom.py` (`sample_custom_requests`) reads it: JSON lines of
`{"conversations" | "conversation": [turn, ...]}`, a turn's text its `content`, else its `value`;
the first turn the prompt, the second the reply (its length the output length); fewer than two
turns, or a prompt or reply under 2 tokens, dropped. Unlike SGLang, a line that is not JSON is
refused by its number rather than skipped (QA: such a file was refused as a whole, with a
conversion to the ShareGPT layout that reads no `content`)."""

from __future__ import annotations

import json

import pytest

from tuner.config.dataset import estimate_tokens
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

REPLY = "A list is mutable and a tuple is not; tuples can be dictionary keys."
LINES = [
    {"conversations": [{"role": "user", "content": "Explain lists and tuples in Python."},
                       {"role": "assistant", "content": REPLY}], "id": "a"},
    {"conversation": [{"from": "human", "value": "Write a haiku about the sea at night."},
                      {"from": "gpt", "value": "Dark waves fold softly, the moon spills silver on foam."}]},
    {"conversations": [{"role": "user", "content": "only one turn, dropped"}]},
    {"conversations": [{"role": "user", "content": "Hi"},
                       {"role": "assistant", "content": "A reply long enough."}]},
    {"conversations": [{"role": "user", "content": "Summarise Hamlet in two sentences."},
                       {"role": "assistant", "value": "Hamlet avenges his father; nearly everyone dies."},
                       {"role": "user", "content": None}], "lang": "en"},  # later turns and other keys unread
]


def _load(tmp_path, lines: list, **dataset):
    (tmp_path / "c.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    spec = {"path": "c.jsonl", "format": "custom", **dataset}
    suite = {"name": "c", "dataset": spec, "sweep": {"concurrencies": [1]}}
    (tmp_path / "s.json").write_text(json.dumps(suite))
    return load_suite(str(tmp_path / "s.json"))


def test_conversations_are_paired_and_dropped_as_sglang_does(tmp_path):
    suite = _load(tmp_path, LINES, max_output_tokens=12)
    # line 3 has one turn, line 4 a prompt of one token ("Hi"): dropped; ids used only if every row has one
    assert [p.name for p in suite.prompts] == ["line1", "line2", "line5"]
    assert [p.text for p in suite.prompts] == [LINES[0]["conversations"][0]["content"],
                                               LINES[1]["conversation"][0]["value"],
                                               LINES[4]["conversations"][0]["content"]]
    replies = [LINES[0]["conversations"][1]["content"], LINES[1]["conversation"][1]["value"],
               LINES[4]["conversations"][1]["value"]]
    assert [p.max_tokens for p in suite.prompts] == [min(12, estimate_tokens(r)) for r in replies]
    assert all(p.messages is None for p in suite.prompts)  # a prompt, as SGLang sends it
    assert suite.to_dict()["dataset"]["format"] == "custom"


@pytest.mark.parametrize("line, says", [
    ("{not json", "line 2: not valid JSON (Expecting property name enclosed in double quotes)"),
    (json.dumps({"prompt": "x"}), "line 2: expected {conversations: [{role, content}, ...]}; got prompt, a request "
                                  "row of the jsonl layout: set format: jsonl to read the file so"),
    (json.dumps({"conversations": [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
                                   {"role": "assistant", "content": "a reply"}]}),
     "line 2: conversations[0]: expected {role, content} (or {from, value}) with text"),
], ids=["not-json", "no-conversations", "content-parts"])
def test_a_line_it_cannot_read_is_named(tmp_path, line, says):
    (tmp_path / "c.jsonl").write_text(json.dumps(LINES[0]) + "\n" + line + "\n", encoding="utf-8")
    dataset = {"path": "c.jsonl", "format": "custom"}
    suite = {"name": "c", "dataset": dataset, "sweep": {"concurrencies": [1]}}
    (tmp_path / "s.json").write_text(json.dumps(suite))
    with pytest.raises(ConfigError) as info:
        load_suite(str(tmp_path / "s.json"))
    assert str(info.value) == f"{tmp_path / 'c.jsonl'}: {says}"


def test_read_as_jsonl_by_its_suffix_the_file_names_the_format(tmp_path):
    (tmp_path / "c.jsonl").write_text(json.dumps(LINES[1]) + "\n", encoding="utf-8")
    (tmp_path / "s.json").write_text(json.dumps({"name": "c", "dataset": {"path": "c.jsonl"},
                                                 "sweep": {"concurrencies": [1]}}))
    with pytest.raises(ConfigError) as info:
        load_suite(str(tmp_path / "s.json"))
    assert str(info.value).endswith("c.jsonl: line 1: conversation: a conversation in a JSON-lines file, "
                                    "SGLang's bench_serving --dataset-name custom layout: set format: custom "
                                    "in the dataset to read it so"), str(info.value)
