"""ShareGPT conversations one a line, saved as ``.json``, are refused with the one format that reads
them, ``custom`` (QA: the line said "set format: jsonl", whose reader then said "set format: custom":
two tries for one fix). JSON lines of requests saved as ``.json`` still say ``format: jsonl``."""

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

CONVERSATION = {"id": "a", "conversations": [{"from": "human", "value": "Tell me a story about a dragon."},
                                             {"from": "gpt", "value": "Once upon a time a dragon kept a library."}]}


def _refusal(tmp_path, text: str) -> str:
    (tmp_path / "d.json").write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "d.json"}}, tmp_path)
    return str(err.value)


@pytest.mark.parametrize("key", ["conversations", "conversation"])
def test_conversation_lines_saved_as_json_say_format_custom(tmp_path, key):
    row = {"id": "a", key: CONVERSATION["conversations"]}
    text = "\ufeff" + json.dumps(row) + "\n" + json.dumps({**row, "id": "b"}) + "\n"
    assert _refusal(tmp_path, text) == (
        f"{tmp_path / 'd.json'}: line 2: not valid JSON (Extra data); read as sharegpt from the file's suffix: set "
        "format: custom if it is one conversation per line (SGLang's bench_serving --dataset-name custom layout)")
    # the fix given reads them
    suite = load_suite({"name": "t", "dataset": {"path": "d.json", "format": "custom"}}, tmp_path)
    assert [p.name for p in suite.prompts] == ["a", "b"]


def test_request_lines_saved_as_json_still_say_format_jsonl(tmp_path):
    text = json.dumps({"prompt": "hello there"}) + "\n" + json.dumps({"prompt": "general kenobi"}) + "\n"
    assert _refusal(tmp_path, text) == (
        f"{tmp_path / 'd.json'}: line 2: not valid JSON (Extra data); read as sharegpt from the file's suffix: set "
        "format: jsonl if it is one JSON object per line")
