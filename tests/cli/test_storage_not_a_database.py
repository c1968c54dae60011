"""An SQLite storage that names a folder, or a file holding something other than an SQLite database
(the study file itself, a log), is one line naming where the URL came from and the fix, exit 2,
the file untouched. QA: a folder said "cannot open: OperationalError: unable to open database file;
run it again once the storage answers" (the advice for an outage); ``--storage sqlite:///study.yaml``
"cannot open: DatabaseError: file is not a database", naming no fix."""

from __future__ import annotations

import os

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data, model_study_here

from tuner.cli import cli


@pytest.fixture
def study(tmp_path, monkeypatch):
    return model_study_here(tmp_path, monkeypatch)


def _one_line(r, starts: str, says: str):
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(starts) and says in lines[0], r.output
    assert "run it again once the storage answers" not in r.output and "DatabaseError" not in r.output
    assert "cannot open" not in r.output


@pytest.mark.parametrize("command", [["study", "create", "s.yaml"], ["study", "run", "s.yaml"],
                                     ["study", "status", "s"], ["study", "list"]], ids=" ".join)
def test_the_study_file_as_storage_is_refused_untouched(study, command):
    before = study.read_bytes()
    r = CliRunner().invoke(cli, command + ["--storage", "sqlite:///s.yaml"], catch_exceptions=False)
    _one_line(r, "error: --storage: 'sqlite:///s.yaml': ", f"{study} holds other data, not an SQLite database")
    assert study.read_bytes() == before and os.listdir(study.parent) == ["s.yaml"]


def test_the_study_file_s_own_storage_key_is_named(study):
    study.write_text(yaml.safe_dump({**model_study_data("s"), "storage": "sqlite:///notes.txt"}))
    (study.parent / "notes.txt").write_text("my notes\n")
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    _one_line(r, f"error: {study}: storage: ", "notes.txt holds other data, not an SQLite database")
    assert (study.parent / "notes.txt").read_text() == "my notes\n"
    assert sorted(os.listdir(study.parent)) == ["notes.txt", "s.yaml"]


@pytest.mark.parametrize("command", [["study", "create", "s.yaml"], ["study", "status", "s"]], ids=" ".join)
def test_a_folder_as_storage_names_a_file_in_it(study, command):
    (study.parent / "dbs").mkdir()
    r = CliRunner().invoke(cli, command + ["--storage", "sqlite:///dbs"], catch_exceptions=False)
    _one_line(r, "error: --storage: 'sqlite:///dbs': ", f"is a folder, not a database file; name the file in it "
                                                        f"(sqlite:///{study.parent / 'dbs' / 'NAME.db'})")
    assert os.listdir(study.parent / "dbs") == []


def test_an_empty_file_is_still_one_sqlite_fills(study):
    (study.parent / "empty.db").write_bytes(b"")
    r = CliRunner().invoke(cli, ["study", "create", "s.yaml", "--storage", "sqlite:///empty.db"],
                           catch_exceptions=False)
    assert r.exit_code == 0, r.output
    assert (study.parent / "empty.db").read_bytes().startswith(b"SQLite format 3\x00")
    r = CliRunner().invoke(cli, ["study", "status", "s", "--storage", "sqlite:///empty.db"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
