"""A ``format`` given that is not the file's layout is named with the one that reads it, as a layout
guessed from the file's suffix is. (QA qa188: ShareGPT conversations one a line, given ``format:
sharegpt`` because they are ShareGPT's, were ``line 2: not valid JSON (Extra data)``, every line being
valid JSON; a ShareGPT list given ``format: custom`` was ``line 1: expected {conversations: ...}``, and
given ``format: jsonl`` pretty-printed ``line 1: not valid JSON (Expecting value)``: none with a fix.)
The fix is followed here: the file loads with the format it names. A file of the layout given, broken on
a line, is named at its line alone."""

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

CONVERSATIONS = [{"id": f"c{i}", "conversations": [
    {"from": "human", "value": f"Tell me about the sea, number {i}."},
    {"from": "gpt", "value": "The sea is wide and deep, and it rolls on and on."}]} for i in range(3)]
ROWS = [{"prompt": f"plain prompt number {i}", "max_tokens": 8} for i in range(3)]


def _load(tmp_path, name: str, fmt: str):
    return load_suite({"name": "t", "dataset": {"path": name, "format": fmt}}, tmp_path)


@pytest.mark.parametrize("name, text, given, key, other", [
    ("sg.jsonl", "".join(json.dumps(c) + "\n" for c in CONVERSATIONS), "sharegpt", "line 2", "custom"),
    ("d.jsonl", "".join(json.dumps(r) + "\n" for r in ROWS), "sharegpt", "line 2", "jsonl"),
    ("sg.json", json.dumps(CONVERSATIONS), "custom", "line 1", "sharegpt"),
    ("sg.json", json.dumps(CONVERSATIONS), "jsonl", "line 1", "sharegpt"),
    ("sg.json", json.dumps(CONVERSATIONS, indent=2), "jsonl", "line 1", "sharegpt"),
    ("sg.json", json.dumps(CONVERSATIONS, indent=2), "custom", "line 1", "sharegpt"),
], ids=["conversation-lines-as-sharegpt", "rows-as-sharegpt", "list-as-custom", "list-as-jsonl",
        "pretty-list-as-jsonl", "pretty-list-as-custom"])
def test_a_format_given_that_is_not_the_files_names_the_one_that_reads_it(tmp_path, name, text, given, key, other):
    (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, name, given)
    said = str(err.value)
    assert said.startswith(f"{tmp_path / name}: {key}: "), said
    assert f"; read as {given}, the format given: set format: {other} if it is " in said, said
    # the fix, followed, reads the file
    prompts = _load(tmp_path, name, other).prompts
    assert len(prompts) == 3


def test_a_file_of_the_format_given_broken_on_a_line_is_named_there_alone(tmp_path):
    (tmp_path / "d.jsonl").write_text(json.dumps(ROWS[0]) + "\n" + '{"prompt": }\n')
    with pytest.raises(ConfigError) as err:
        _load(tmp_path, "d.jsonl", "jsonl")
    assert str(err.value) == f"{tmp_path / 'd.jsonl'}: line 2: not valid JSON (Expecting value)"
