"""A JSONL row's ``max_tokens`` written as a whole-number float: pandas writes an integer column with a
gap as floats (``256.0``, and ``null`` for the gap), as the conversion the tuner's own CSV and Parquet
refusals suggest (``p.read_csv(...).to_json(..., orient='records', lines=True)``) does, and SGLang 0.5.23's
``bench_serving --dataset-name openai`` sends such a row's length as it is, which its
``max_completion_tokens`` takes as 256. QA: the converted file was refused at its first line,
``max_tokens: must be a positive integer, got 256.0``. A whole-number float is that length; a fraction,
zero, a negative number and ``true`` stay refused with the value as written."""

from __future__ import annotations

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def suite_of(tmp_path, rows: list[str]):
    (tmp_path / "d.jsonl").write_text("".join(r + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "s.yaml").write_text("name: t\ndataset: {path: d.jsonl, default_max_tokens: 64}\n"
                                     "single: {repeats: 1}\n", encoding="utf-8")
    return load_suite(str(tmp_path / "s.yaml"))


def test_rows_as_pandas_writes_an_integer_column_with_a_gap(tmp_path):
    # what DataFrame({"prompt": [...], "max_tokens": [256, None, 32]}).to_json(orient="records", lines=True)
    # writes: the column is float64 once a value is missing
    rows = [json.dumps({"prompt": "Write quicksort in Python.", "max_tokens": 256.0}),
            json.dumps({"prompt": "Name a colour, please.", "max_tokens": None}),
            json.dumps({"prompt": "Say hello in French.", "max_tokens": 32.0})]
    suite = suite_of(tmp_path, rows)
    lengths = {p.text: p.max_tokens for p in suite.prompts}
    assert lengths == {"Write quicksort in Python.": 256, "Name a colour, please.": 64, "Say hello in French.": 32}
    assert all(type(n) is int for n in lengths.values())
    # the same requests as the file written with integers: the same suite
    ints = tmp_path / "ints"
    ints.mkdir()
    same = suite_of(ints, [r.replace(".0}", "}") for r in rows])
    assert [p.model_dump() for p in same.prompts] == [p.model_dump() for p in suite.prompts]


@pytest.mark.parametrize("value", ["256.5", "0.0", "-8.0", "true", "1e400"])
def test_what_is_no_length_stays_refused_as_written(tmp_path, value):
    with pytest.raises(ConfigError) as err:
        suite_of(tmp_path, ['{"prompt": "Write quicksort in Python.", "max_tokens": %s}' % value])
    written = {"true": "True", "1e400": "inf"}.get(value, value)
    assert str(err.value).endswith(f"d.jsonl: line 1: max_tokens: must be a positive integer, got {written}"), \
        str(err.value)
