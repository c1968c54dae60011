"""Rows written with ``str(row)`` or ``print(row)`` instead of ``json.dumps`` (single quotes,
``None``, ``True``, ``False``) are refused naming the Python literal, its column and JSON's spelling
(QA: ``{'prompt': 'hi'}`` was "not valid JSON (Expecting property name enclosed in double quotes)",
``"max_tokens": None`` "not valid JSON (Expecting value)", with neither where nor why)."""

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

FIX = "the rows look written with str() or print(): write each with json.dumps"


def _refusal(tmp_path, name: str, text: str, **dataset) -> str:
    (tmp_path / name).write_text(text)
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": name, **dataset}}, tmp_path)
    return str(err.value)


@pytest.mark.parametrize("row, error, literal, json_form", [
    (str({"prompt": "hello there", "max_tokens": 8}), "Expecting property name enclosed in double quotes",
     "a ' quote", '"'),
    ('{"prompt": "hello there", "max_tokens": None}', "Expecting value", "None", "null"),
    ('{"prompt": "hello there", "id": True}', "Expecting value", "True", "true"),
    ('{"prompt": "hello there", "id": False}', "Expecting value", "False", "false"),
])
def test_a_python_literal_in_a_jsonl_row_is_named(tmp_path, row, error, literal, json_form):
    first = json.dumps({"prompt": "a first row"})
    said = _refusal(tmp_path, "d.jsonl", f"{first}\n {row}\n")
    at = "'" if literal == "a ' quote" else literal
    column = 1 + 1 + row.index(at)  # one blank before the row
    assert said == (f"{tmp_path / 'd.jsonl'}: line 2: not valid JSON ({error}: {literal} at column {column} is "
                    f"Python's, JSON writes {json_form}; {FIX})")


def test_a_python_repr_of_a_sharegpt_list_is_named(tmp_path):
    rows = [{"conversations": [{"from": "human", "value": "hello there"}, {"from": "gpt", "value": "general kenobi"}]}]
    said = _refusal(tmp_path, "d.json", str(rows))
    assert said == (f"{tmp_path / 'd.json'}: line 1: not valid JSON (Expecting property name enclosed in double "
                    f"quotes: a ' quote at column 3 is Python's, JSON writes \"; {FIX})")


@pytest.mark.parametrize("row", ['{"prompt": "x",}', '{"prompt": Nonesuch}'])
def test_other_json_errors_are_said_as_before(tmp_path, row):
    # in the json module's own words, which differ by release (3.13: "Illegal trailing comma before end
    # of object"; before: "Expecting property name enclosed in double quotes")
    with pytest.raises(json.JSONDecodeError) as said:
        json.loads(row)
    error = said.value.msg
    assert _refusal(tmp_path, "d.jsonl", row + "\n") == f"{tmp_path / 'd.jsonl'}: line 1: not valid JSON ({error})"
