"""A storage URL read from an environment variable ($TUNER_STORAGE, or `--storage '${VAR}'`) that is
no URL names the variable it came from: `tuner study create s.yaml` with TUNER_STORAGE=garbage said
`--storage: storage: 'garbage' is not a storage URL`, blaming a flag nobody gave (QA). Exit 2, one
line, nothing written, and a password in the variable still never printed."""

from __future__ import annotations

import os

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli


@pytest.fixture
def study(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "s.yaml"
    path.write_text(yaml.safe_dump(model_study_data("s")))
    return path


@pytest.mark.parametrize("args", [["study", "create", "{s}"], ["study", "run", "{s}"], ["study", "status", "s"],
                                  ["study", "list"], ["study", "copy", "s", "t"]])
def test_tuner_storage_that_is_no_url_is_named(study, monkeypatch, args):
    monkeypatch.setenv("TUNER_STORAGE", "garbage:s3cret@db")
    r = CliRunner().invoke(cli, [a.format(s=study) for a in args], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "$TUNER_STORAGE" in lines[0] and "is not a storage URL" in lines[0], r.output
    assert "s3cret" not in r.output
    assert sorted(os.listdir(study.parent)) == ["s.yaml"]


def test_storage_flag_variable_is_named(study, monkeypatch):
    monkeypatch.setenv("MY_DB", "garbage")
    r = CliRunner().invoke(cli, ["study", "status", "--study", "s", "--storage", "${MY_DB}"],
                           catch_exceptions=False)
    assert r.exit_code == 2
    assert r.output.startswith("error: --storage: ") and "$MY_DB" in r.output, r.output
