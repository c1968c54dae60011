"""A control character written raw inside a JSON string (a tab from a hand-made or tab-separated
export, a stray NUL, a newline inside a ShareGPT value) is refused naming the character, its line and
column, and the escape JSON writes (QA: "line 1: not valid JSON (Invalid control character at)", the
character, where it is and the fix left out). UTF-16 text without its mark is still named as such."""

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def _refusal(tmp_path, name: str, data: bytes, **dataset) -> str:
    (tmp_path / name).write_bytes(data)
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": name, **dataset}}, tmp_path)
    return str(err.value)


def _says(char: str, column: int, escaped: str) -> str:
    return (f"not valid JSON (a raw control character {char} in a string, column {column}: JSON text writes it "
            f"escaped, as {escaped}; write the rows with a JSON writer (Python's json.dumps does))")


@pytest.mark.parametrize("char, shown, escaped", [("\t", "\\x09", "\\t"), ("\x00", "\\x00", "\\u0000"),
                                                  ("\x1b", "\\x1b", "\\u001b")])
def test_a_raw_control_character_in_a_jsonl_row_is_named_with_its_column(tmp_path, char, shown, escaped):
    good = json.dumps({"prompt": "a first row"}) + "\n"
    said = _refusal(tmp_path, "d.jsonl", (good + '  {"prompt": "col1' + char + 'col2"}\n').encode())
    # column 19: two blanks, then the 17th character of the row
    assert said == f"{tmp_path / 'd.jsonl'}: line 2: {_says(shown, 19, escaped)}"


def test_a_raw_newline_in_a_sharegpt_value_is_named_with_its_line_and_column(tmp_path):
    text = '[\n {"conversations": [{"from": "human", "value": "one\ntwo"}, {"from": "gpt", "value": "a reply"}]}\n]'
    said = _refusal(tmp_path, "d.json", text.encode())
    column = text.index("one\n") + len("one") - text.index("\n")  # the raw newline's, on line 2
    assert said == f"{tmp_path / 'd.json'}: line 2: {_says(chr(92) + 'x0a', column, chr(92) + 'n')}"


def test_a_raw_tab_in_a_custom_line_is_named(tmp_path):
    row = '{"conversations": [{"role": "user", "content": "a\tb c d e"}, {"role": "assistant", "content": "x y z w"}]}'
    said = _refusal(tmp_path, "c.jsonl", (row + "\n").encode(), format="custom")
    assert said == f"{tmp_path / 'c.jsonl'}: line 1: {_says(chr(92) + 'x09', row.index(chr(9)) + 1, chr(92) + 't')}"


def test_the_same_row_escaped_is_read_with_its_character(tmp_path):
    (tmp_path / "d.jsonl").write_text(json.dumps({"prompt": "col1\tcol2"}) + "\n")
    suite = load_suite({"name": "t", "dataset": {"path": "d.jsonl"}}, tmp_path)
    assert [p.text for p in suite.prompts] == ["col1\tcol2"]


def test_utf16_without_its_mark_is_still_named_as_such(tmp_path):
    said = _refusal(tmp_path, "d.jsonl", (json.dumps({"prompt": "a b c d"}) + "\n").encode("utf-16-le"))
    assert said.endswith("line 1: not valid JSON (Expecting property name enclosed in double quotes); it holds "
                         "NUL bytes: UTF-16 text? save the file as UTF-8")
