"""A JSON list of request rows saved as ``.json`` (``json.dump(rows)``, pandas'
``to_json(orient="records")``, an Alpaca-style instruction set) is refused naming what its rows are,
with the command that writes them as JSON lines (QA: "[0]: expected {id, conversations: [{from,
value}, ...]}", the fix left to guess); a ``format: custom`` file of such rows says to read it as
``jsonl``."""

import json
import shlex

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

ROWS = [{"id": "q1", "prompt": "Write quicksort in Python.", "max_tokens": 64},
        {"id": "q2", "messages": [{"role": "user", "content": "Name a colour."}]}]


def _refusal(tmp_path, name, text, **dataset) -> str:
    (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": name, **dataset}}, tmp_path)
    return str(err.value)


@pytest.mark.parametrize("first", [0, 1])
def test_a_json_list_of_request_rows_says_how_to_write_them_as_lines(tmp_path, first):
    rows = ROWS[first:]
    data, lines = tmp_path / "my rows.json", tmp_path / "my rows.lines.jsonl"
    said = _refusal(tmp_path, data.name, json.dumps(rows, indent=2))
    key = "prompt" if first == 0 else "messages"
    command = f"jq -c '.[]' {shlex.quote(str(data))} > {shlex.quote(str(lines))}"
    assert said == (f"{data}: [0]: expected {{id, conversations: [{{from, value}}, ...]}}; got {key}, a JSON list of "
                    f"request rows: JSON lines hold one a line ({command} writes them so; give that file as "
                    "dataset.path)")
    assert shlex.split(command)[3:] == [str(data), ">", str(lines)]
    # what the command writes (jq -c: each row on one line) is read as the rows the list held
    lines.write_text("".join(json.dumps(r) + "\n" for r in rows))
    suite = load_suite({"name": "t", "dataset": {"path": lines.name}}, tmp_path)
    assert [p.name for p in suite.prompts] == [r["id"] for r in rows]


def test_a_json_list_of_instruction_rows_says_how_to_make_prompts(tmp_path):
    said = _refusal(tmp_path, "alpaca.json", json.dumps([{"instruction": "Give three tips", "input": "",
                                                           "output": "1. Sleep."}]))
    out = tmp_path / "alpaca.lines.jsonl"
    assert said == (f"{tmp_path / 'alpaca.json'}: [0]: expected {{id, conversations: [{{from, value}}, ...]}}; got "
                    "instruction, a JSON list of instruction-tuning rows: write each as a prompt on its own line "
                    "(jq -c '.[] | {prompt: ([.instruction, .input] | map(select(. != null and . != \"\")) | join(\"\\n\\n\"))}' "
                    f"{shlex.quote(str(tmp_path / 'alpaca.json'))} > {shlex.quote(str(out))}) and give that file as dataset.path")


def test_request_rows_read_as_custom_say_to_read_them_as_jsonl(tmp_path):
    said = _refusal(tmp_path, "d.jsonl", "".join(json.dumps(r) + "\n" for r in ROWS), format="custom")
    assert said == (f"{tmp_path / 'd.jsonl'}: line 1: expected {{conversations: [{{role, content}}, ...]}}; got "
                    "prompt, a request row of the jsonl layout: set format: jsonl to read the file so")


def test_an_entry_of_another_shape_is_refused_as_before(tmp_path):
    said = _refusal(tmp_path, "d.json", json.dumps([{"id": "a", "text": "hello there"}]))
    assert said == f"{tmp_path / 'd.json'}: [0]: expected {{id, conversations: [{{from, value}}, ...]}}"
