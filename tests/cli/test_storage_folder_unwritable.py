"""`tuner study create` and `run` with an SQLite storage whose folder cannot be written: one line
naming the study file's `storage` (or `--storage`) and the fix, exit 2, nothing written.

QA: create said only `error: storage: sqlite:///.../ro/rr.db: cannot open: OperationalError: unable to
open database file`; run `error: fail  storage: ...: ConfigError: storage: ...: cannot write in ...:
check the URL, the server and the user's rights`, exit 1.
"""

import pytest
from click.testing import CliRunner

from support.faults import read_only
from support.model_study import model_study_yaml
from tuner.cli import cli

STUDY = model_study_yaml("rw", "sqlite:///ro/rw.db", 1)


@pytest.mark.parametrize("args", [["study", "create"], ["study", "run"], ["study", "run", "--dry-run"]],
                         ids=["create", "run", "dry-run"])
@pytest.mark.parametrize("flag", [False, True], ids=["file", "flag"])
def test_an_unwritable_storage_folder_is_one_line(args, flag, tmp_path, monkeypatch):
    (tmp_path / "ro").mkdir()
    study = tmp_path / "rw.yaml"
    study.write_text(STUDY)
    monkeypatch.chdir(tmp_path)
    extra = ["--storage", f"sqlite:///{tmp_path / 'ro' / 'other.db'}"] if flag else []
    with read_only(tmp_path / "ro"):
        r = CliRunner().invoke(cli, [*args, str(study), *extra])
    assert r.exit_code == 2, r.output
    line = r.output.strip()
    assert "\n" not in line, line
    where = "error: --storage: " if flag else f"error: {study}: storage: "
    assert line.startswith(where) and "cannot write in" in line and "choose a folder you can write to" in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ro", "rw.yaml"] and not list((tmp_path / "ro").iterdir())


def test_run_with_storage_given_checks_that_storage_not_the_files(tmp_path, monkeypatch):
    """QA: `run STUDY.yaml --storage GOOD` was refused (exit 1) by the pre-run check of the study
    file's own storage, which the run does not use."""
    (tmp_path / "ro").mkdir()
    study = tmp_path / "rw.yaml"
    study.write_text(STUDY)
    monkeypatch.chdir(tmp_path)
    good = tmp_path / "good.db"
    with read_only(tmp_path / "ro"):
        r = CliRunner().invoke(cli, ["study", "run", str(study), "--storage", f"sqlite:///{good}"])
    assert r.exit_code == 0, r.output
    assert good.is_file() and not list((tmp_path / "ro").iterdir())
