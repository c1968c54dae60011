"""A storage URL whose scheme the tuner cannot use (a mistyped `SQLITE://` or `postgresq://`, or a
database it does not support: `mysql://`) is one line naming where the URL came from (`--storage`,
the study file's `storage`, `$TUNER_STORAGE`), the scheme and what is expected, exit 2, nothing
written, on every command. QA: read-only commands said "failed during the command ... run it again
once the storage answers" (advice for an outage), `create` "cannot open: NoSuchModuleError", and
`run` with `mysql://` "fail  storage: ..." on two lines with exit 1."""

from __future__ import annotations

import os

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data, model_study_here

from tuner.cli import cli

BAD = ["SQLITE:///x.db", "postgresq://u:s3cret@127.0.0.1/db", "mysql://u:s3cret@127.0.0.1/db"]
COMMANDS = [["study", "create", "{s}"], ["study", "run", "{s}"], ["study", "run", "--study", "s"],
            ["study", "status", "s"], ["study", "status", "{s}"], ["study", "list"],
            ["study", "pareto", "s"], ["study", "export", "s", "--pick", "knee", "-o", "best.yaml"],
            ["study", "report", "s", "-o", "r.html"], ["study", "delete", "s", "--yes"],
            ["study", "copy", "s", "t"]]


@pytest.fixture
def study(tmp_path, monkeypatch):
    return model_study_here(tmp_path, monkeypatch)


def _check(r, study, where, scheme):
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    line = lines[0]
    assert line.startswith(f"error: {where}"), line
    assert f"scheme {scheme!r}" in line, line
    assert "expected sqlite:///PATH or postgresql://USER@HOST/DB" in line, line
    assert "failed during the command" not in line and "NoSuchModuleError" not in line, line
    assert "s3cret" not in r.output
    assert sorted(os.listdir(study.parent)) == ["s.yaml"]


@pytest.mark.parametrize("url", BAD)
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_storage_flag(study, url, args):
    given = [a.format(s=study) for a in args] + ["--storage", url]
    r = CliRunner().invoke(cli, given, catch_exceptions=False)
    _check(r, study, "--storage: ", url.partition(":")[0])


@pytest.mark.parametrize("url", BAD)
@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_tuner_storage_variable(study, monkeypatch, url, args):
    monkeypatch.setenv("TUNER_STORAGE", url)
    r = CliRunner().invoke(cli, [a.format(s=study) for a in args], catch_exceptions=False)
    _check(r, study, "$TUNER_STORAGE: ", url.partition(":")[0])


@pytest.mark.parametrize("url", BAD)
@pytest.mark.parametrize("args", [a for a in COMMANDS if "{s}" in a], ids=" ".join)
def test_study_file_key(study, url, args):
    study.write_text(yaml.safe_dump({**model_study_data("s"), "storage": url}))
    r = CliRunner().invoke(cli, [a.format(s=study) for a in args], catch_exceptions=False)
    _check(r, study, f"{study}: storage: ", url.partition(":")[0])


def test_upper_case_sqlite_is_refused_with_the_lower_case_spelling(study):
    r = CliRunner().invoke(cli, ["study", "status", "s", "--storage", "SQLITE:///x.db"],
                           catch_exceptions=False)
    assert "lower-case" in r.output and "sqlite" in r.output.replace("SQLITE", ""), r.output


def test_a_near_miss_is_named(study):
    r = CliRunner().invoke(cli, ["study", "status", "s", "--storage", "postgresq://u:s3cret@127.0.0.1/db"],
                           catch_exceptions=False)
    assert "did you mean 'postgresql'?" in r.output, r.output


@pytest.mark.parametrize("args", [["study", "create", "{s}"], ["study", "run", "{s}"],
                                  ["study", "status", "s"]], ids=" ".join)
def test_a_missing_driver_is_one_line_and_exit_2_everywhere(study, monkeypatch, args):
    import sys

    monkeypatch.setitem(sys.modules, "psycopg", None)  # neither PostgreSQL driver importable
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    url = "postgresql://u:s3cret@127.0.0.1/db"
    given = [a.format(s=study) for a in args] + ["--storage", url]
    r = CliRunner().invoke(cli, given, catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --storage: "), r.output
    assert "no module 'psycopg2'" in lines[0] and "pip install" in lines[0] and "s3cret" not in r.output
    assert sorted(os.listdir(study.parent)) == ["s.yaml"]


@pytest.mark.parametrize("url, sync", [("postgresql+asyncpg://u:s3cret@127.0.0.1/db", "postgresql+psycopg2://"),
                                       ("sqlite+aiosqlite:///x.db", "sqlite:///")])
@pytest.mark.parametrize("args", [["study", "create", "{s}"], ["study", "status", "s"]], ids=" ".join)
def test_an_asyncio_driver_is_refused_whether_installed_or_not(study, url, sync, args):
    """QA (stop 46): `postgresql+asyncpg://` was told to `pip install asyncpg`, after which Optuna's
    synchronous engine refuses it anyway ("The asyncio extension requires an async driver")."""
    given = [a.format(s=study) for a in args] + ["--storage", url]
    r = CliRunner().invoke(cli, given, catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --storage: "), r.output
    assert "asyncio driver" in lines[0] and f"use {sync}" in lines[0], lines[0]
    assert "pip install" not in lines[0] and "s3cret" not in r.output
    assert sorted(os.listdir(study.parent)) == ["s.yaml"]
