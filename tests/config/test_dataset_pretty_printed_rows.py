"""JSON lines pretty-printed, each object over several lines (``jq '.[]'`` without ``-c``,
``json.dumps(row, indent=2)`` a row), are refused at their first line with the command that writes
each object on one line (QA: "line 1: not valid JSON (Expecting property name enclosed in double
quotes)", the fix left to guess)."""

import json
import shlex

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

ROWS = [{"id": "q1", "prompt": "Write quicksort in Python.", "max_tokens": 64},
        {"id": "q2", "messages": [{"role": "user", "content": "Name a colour."}]}]


@pytest.mark.parametrize("layout", ["jsonl", "custom"])
def test_pretty_printed_rows_are_named_with_the_command_that_mends_them(tmp_path, layout):
    rows = ROWS if layout == "jsonl" else [
        {"conversations": [{"from": "human", "value": "Tell me a story."}, {"from": "gpt", "value": "Once upon a time"}]}]
    data = tmp_path / "my data.jsonl"  # a space: the command quotes the file for the shell
    data.write_text("".join(json.dumps(r, indent=2) + "\n" for r in rows))
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": data.name, "format": layout}}, tmp_path)
    fixed = tmp_path / "my data.lines.jsonl"
    assert str(err.value) == (
        f"{data}: line 1: not valid JSON (Expecting property name enclosed in double quotes); '{{' alone on its "
        "line: the objects are pretty-printed, and JSON lines hold each one whole on a line "
        f"(jq -c . {shlex.quote(str(data))} > {shlex.quote(str(fixed))} writes them so; give that file as "
        "dataset.path)")
    # the command as the shell splits it: jq reads the file named, and writes another one beside it
    command = str(err.value).split("(jq ", 1)[1].split(" writes them so", 1)[0]
    assert shlex.split("jq " + command) == ["jq", "-c", ".", str(data), ">", str(fixed)]
    # what it writes (each object on one line, as jq -c prints it) loads
    fixed.write_text("".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in rows))
    suite = load_suite({"name": "t", "dataset": {"path": fixed.name, "format": layout}}, tmp_path)
    assert [p.text for p in suite.prompts] == ([ROWS[0]["prompt"], "Name a colour."] if layout == "jsonl"
                                               else ["Tell me a story."])

def test_a_row_cut_short_is_not_taken_for_a_pretty_printed_one(tmp_path):
    (tmp_path / "d.jsonl").write_text('{"prompt": "a"}\n{"prompt": "b\n')
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "d.jsonl"}}, tmp_path)
    assert "pretty-printed" not in str(err.value) and ": line 2: not valid JSON" in str(err.value)
