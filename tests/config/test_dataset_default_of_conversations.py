"""``dataset.default_max_tokens`` given for a ShareGPT or ``custom`` file, whose every request takes its reply's
length (SGLang's sharegpt rule), is refused as never read, with the fix (QA qa207: ``default_max_tokens: 512`` on
a ShareGPT file drew requests of 8 and 13 tokens, silently). A JSONL file reads it; a ShareGPT file without it
draws its replies' lengths."""

import json

import pytest

from tuner.config.dataset import estimate_tokens
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

TURNS = [{"from": "human", "value": "Tell me about the sea, please."},
         {"from": "gpt", "value": "The sea is wide and deep, and it rolls on."}]


def _suite(folder, layout: str, dataset: str) -> None:
    if layout == "sharegpt":
        (folder / "d.json").write_text(json.dumps([{"id": "a", "conversations": TURNS}]))
        path = "d.json"
    else:
        row = {"conversations": TURNS} if layout == "custom" else {"prompt": TURNS[0]["value"]}
        (folder / "d.jsonl").write_text(json.dumps(row) + "\n")
        path = "d.jsonl"
    fmt = ", format: custom" if layout == "custom" else ""
    (folder / "s.yaml").write_text(f"name: s\ndataset: {{path: {path}{fmt}{dataset}}}\n")


@pytest.mark.parametrize("layout", ["sharegpt", "custom"])
def test_a_default_length_for_conversations_is_refused_as_never_read(tmp_path, layout):
    _suite(tmp_path, layout, ", default_max_tokens: 512")
    with pytest.raises(ConfigError) as err:
        load_suite(tmp_path / "s.yaml")
    assert str(err.value) == (
        f"{tmp_path / 's.yaml'}: dataset.default_max_tokens: 512 is never read: a {layout} request's output length is "
        "its reply's, as SGLang's reader takes it (capped at max_output_tokens); drop it, or give every request one "
        "length as single.lengths and sweep.max_tokens")


REPLY = estimate_tokens(TURNS[1]["value"])  # (the reply's length, as SGLang's rule reads it)


@pytest.mark.parametrize("layout, dataset, drawn", [("jsonl", ", default_max_tokens: 512", 512),
                                                    ("sharegpt", "", REPLY), ("custom", "", REPLY)])
def test_a_default_read_or_not_given_is_taken(tmp_path, layout, dataset, drawn):
    _suite(tmp_path, layout, dataset)
    assert [p.max_tokens for p in load_suite(tmp_path / "s.yaml").prompts] == [drawn]
