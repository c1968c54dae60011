"""``dataset.format`` written otherwise than the tuner's names (``ShareGPT``, the dataset's own spelling;
``json`` for a ``.json`` file; SGLang's ``--dataset-name openai``; ``ndjson``) is refused with the value
given and the name meant. (QA qa188: each was "input should be 'jsonl', 'sharegpt' or 'custom'", without
the value or the fix.) The fix, followed, loads the suite."""

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

ROWS = [{"messages": [{"role": "user", "content": f"plain prompt number {i}"}], "max_tokens": 8} for i in range(3)]


@pytest.mark.parametrize("given, says, meant", [
    ("ShareGPT", "got 'ShareGPT'; formats are lower case: write it as sharegpt", None),
    ("JSONL", "got 'JSONL'; formats are lower case: write it as jsonl", "jsonl"),
    ("openai", "got 'openai'; SGLang's --dataset-name openai rows ({messages, max_tokens}) are the jsonl layout's: "
               "write it as jsonl", "jsonl"),
    ("ndjson", "got 'ndjson'; JSON lines are the jsonl layout: write it as jsonl", "jsonl"),
    ("json", "got 'json'; for a .json file, sharegpt reads a JSON list of conversations, and jsonl one JSON object "
             "per line", None),
    ("random", "got 'random'", None),
], ids=["ShareGPT", "JSONL", "openai", "ndjson", "json", "other"])
def test_a_format_named_otherwise_says_the_value_and_the_name_meant(tmp_path, given, says, meant):
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "d.jsonl", "format": given}}, tmp_path)
    said = str(err.value)
    assert said.endswith(f"dataset.format: expected one of jsonl, sharegpt, custom, {says}"), said
    assert len(said.splitlines()) == 1, said
    if meant is not None:
        assert len(load_suite({"name": "t", "dataset": {"path": "d.jsonl", "format": meant}}, tmp_path).prompts) == 3
