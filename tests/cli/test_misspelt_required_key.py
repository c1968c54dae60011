"""A required key written with another case or spelling (`Name:`, `search-space:`, `Server:`) is
reported as that unknown key with the key it resembles, not as the required key missing: QA saw
`name: required key is missing` for a file whose first line was `Name: m`, with nothing pointing
at the line to fix. Exit 2, one line, nothing written."""

from __future__ import annotations

import os

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli


def study() -> dict:
    return model_study_data("k")


@pytest.mark.parametrize("path,written,expected", [
    ((), "Name", "name"), ((), "search-space", "search_space"), ((), "SERVER", "server"),
    (("server",), "Backend", "backend"), (("server",), "model-path", "model_path"),
])
def test_a_misspelt_required_key_is_named(tmp_path, path, written, expected):
    data = study()
    where = data
    for part in path:
        where = where[part]
    where[written] = where.pop(expected)
    file = tmp_path / "k.yaml"
    file.write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(cli, ["study", "create", str(file)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    dotted = ".".join([*path, written])
    assert r.output.strip() == f"error: {file}: {dotted}: unknown key (did you mean {expected!r}?)", r.output
    assert os.listdir(tmp_path) == ["k.yaml"]
