"""Commands given a mistyped SQLite storage say so in one line and create nothing: no empty .db
file, no folder (tuner/engine/storage.py, ``open_storage(create=False)``)."""

import pytest
from click.testing import CliRunner

from tuner.cli import cli

COMMANDS = [
    ["study", "status", "typo"],
    ["study", "status", "--study", "typo", "-f", "json"],
    ["study", "pareto", "typo"],
    ["study", "export", "typo", "--pick", "knee"],
    ["study", "report", "typo", "-o", "{tmp}/r.html"],
    ["study", "list"],
    ["study", "compare", "typo", "other"],
    ["study", "confirm", "typo", "--show"],
    ["study", "delete", "typo", "--yes"],
    ["study", "copy", "typo", "copied"],
    ["study", "run", "--study", "typo", "--workdir", "{tmp}/wd", "--dry-run"],
    ["study", "run", "--study", "typo", "--workdir", "{tmp}/wd"],  # continuing a study never creates one
]


@pytest.mark.parametrize("where", ["typo.db", "no-such-folder/typo.db"])
@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[1:2] + a[-1:]))
def test_a_mistyped_sqlite_storage_creates_nothing(argv, where, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    url = f"sqlite:///{tmp_path / where}"
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv] + ["--storage", url]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "no such storage" in lines[0], result.output
    assert str(tmp_path / where) in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "something was created"


def test_a_study_file_whose_storage_is_not_there_yet(tmp_path, monkeypatch):
    """`status STUDY.yaml` before any run: no file made beside the study file."""
    from support.faults import study_file

    monkeypatch.chdir(tmp_path)
    path = study_file(tmp_path, "fresh", 2, storage=f"sqlite:///{tmp_path / 'fresh.db'}")
    result = CliRunner().invoke(cli, ["study", "status", str(path)], catch_exceptions=False)
    assert result.exit_code == 2 and "no such storage" in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fresh.yaml"]


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda a: " ".join(a[1:2] + a[-1:]))
def test_a_mistyped_file_named_like_sqlites_uri_form_creates_nothing(argv, tmp_path, monkeypatch):
    """``sqlite:///file:typo.db`` without ``?uri=true`` names a plain file, ``file:typo.db``, as
    SQLite's driver opens it (QA: taken for SQLite's URI form, it was no file to check; the
    database-server check opened it, and every read-only command left an empty ``file:typo.db``
    behind while saying "nothing was created")."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    args = [a.replace("{tmp}", str(tmp_path)) for a in argv] + ["--storage", "sqlite:///file:typo.db"]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "no such storage" in lines[0], result.output
    assert str(tmp_path / "file:typo.db") in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "something was created"
