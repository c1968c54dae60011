"""`SuiteResult.load` on a file of another shape than `tuner bench --json` writes: ValueError naming
the file, as its docstring says, for a Python caller too (QA fuzz, qa138: TypeError, AttributeError
and RecursionError)."""

import json

import pytest

from tuner.bench.result import SCHEMA_VERSION, SuiteResult


@pytest.mark.parametrize("doc", [
    {"schema_version": SCHEMA_VERSION, "records": 5},
    {"schema_version": SCHEMA_VERSION, "records": [[1, 2]]},
    {"schema_version": SCHEMA_VERSION, "records": [], "resolved_spec": "3-1-4"},
])
def test_a_field_of_another_shape_is_a_value_error_naming_the_file(tmp_path, doc):
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"r\.json: not a result `tuner bench --json` saves"):
        SuiteResult.load(path)


def test_json_nested_thousands_deep_is_a_value_error(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"schema_version": 1, "records": [], "suite": ' + "[" * 100000 + "]" * 100000 + "}")
    with pytest.raises(ValueError, match="deep.json"):
        SuiteResult.load(path)
