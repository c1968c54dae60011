"""A command started in a folder that no longer exists (deleted, or moved, after the shell entered
it): ``os.getcwd()`` fails, and so does every relative path.

QA (qa157): ``tuner study run /abs/demo.yaml`` and ``tuner study export /abs/demo.yaml -o /abs/b.yaml``
ended in ``FileNotFoundError: [Errno 2] No such file or directory`` tracebacks (``Path.cwd()`` in the
suite loader, ``Path.resolve()`` of the workdir). Now every command says so in one line, exit 2,
before anything is read or written.
"""

import os

import pytest
from click.testing import CliRunner

from support.model_study import one_launch_study
from tuner.cli import cli

STUDY = one_launch_study("gone")


@pytest.mark.parametrize("command", [["run"], ["create"], ["export", "--pick", "knee", "-o", "OUT"]])
def test_a_deleted_working_folder_is_one_line(tmp_path, monkeypatch, command):
    home = tmp_path / "home"
    home.mkdir()
    study = home / "gone.yaml"
    study.write_text(STUDY)
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    with pytest.raises(FileNotFoundError):
        os.getcwd()
    argv = ["study", command[0], str(study), *[str(home / "b.yaml") if a == "OUT" else a for a in command[1:]]]
    done = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert done.exit_code == 2, done.output
    assert done.stderr.strip().splitlines() == [
        "error: the current folder no longer exists (it was deleted or moved after this shell entered it); "
        "cd to an existing folder and run the command again"]
    assert sorted(p.name for p in home.iterdir()) == ["gone.yaml"]  # nothing written
