"""A study's SQLite database given where the study file goes (``tuner study status demo.db``, a
likely slip: the two lie side by side) is one line saying what the file is and how to name the
study in it, exit 2, the database untouched. QA: every command said "not UTF-8 text (byte 106); save
the file as UTF-8"."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli

COMMANDS = [["study", "status"], ["study", "run"], ["study", "create"], ["study", "pareto"],
            ["study", "export", "--pick", "knee"], ["study", "delete", "--yes"], ["launch", "--print"]]


@pytest.fixture(scope="module")
def database(tmp_path_factory):
    folder = tmp_path_factory.mktemp("db")
    (folder / "s.yaml").write_text(yaml.safe_dump(model_study_data("s")))
    r = CliRunner().invoke(cli, ["study", "create", str(folder / "s.yaml")], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert (folder / "s.db").read_bytes().startswith(b"SQLite format 3\x00")
    return folder / "s.db"


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_the_database_is_named_as_a_storage(database, monkeypatch, command):
    monkeypatch.chdir(database.parent)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    before = database.read_bytes()
    r = CliRunner().invoke(cli, command[:2] + ["s.db"] + command[2:], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert lines == ["error: s.db: is an SQLite database (a study's storage), not a study file; give the study's "
                     "YAML file, or the study's name with --storage sqlite:///s.db (`tuner study list --storage "
                     "sqlite:///s.db` names its studies)"], r.output
    assert database.read_bytes() == before
    # the way out it gives works
    r = CliRunner().invoke(cli, ["study", "list", "--storage", "sqlite:///s.db"], catch_exceptions=False)
    assert r.exit_code == 0 and "s" in r.output, r.output


def test_doctor_says_it_as_its_study_file_line(database, monkeypatch):
    monkeypatch.chdir(database.parent)
    r = CliRunner().invoke(cli, ["doctor", "s.db"], catch_exceptions=False)
    assert r.exit_code == 1, r.output
    assert r.output.startswith("fail  study file: s.db: is an SQLite database (a study's storage)"), r.output
