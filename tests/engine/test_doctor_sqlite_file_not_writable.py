"""``tuner doctor`` on a study whose SQLite file this user may read but not write: another user's,
mode 0644 (or a file on a read-only file system).

QA (qa167): doctor said ``pass  storage: sqlite:///...db is reachable and writable``, where ``tuner
study run`` refuses the same file at once (``... cannot be written by this user``): SQLite opens a
file it may not write read-only, and the probe's ``BEGIN IMMEDIATE`` takes its lock all the same.
The command runs in a new user namespace (``unshare --user``, no uid mapped), where root's
capabilities do not reach the file: as root the file is another uid's (4242) of mode 0644,
otherwise this user's own of mode 0444 (the same EACCES from open(2) for writing). Likewise a file
of mode 0666 in a folder this user may not write (SQLite's journal goes there; the lock needs none).
"""

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from support.model_study import one_launch_study
from tuner.cli import cli

STUDY = one_launch_study("theirs")


def storage_line(study, cwd) -> str:
    done = subprocess.run(["unshare", "--user", sys.executable, "-m", "tuner", "doctor", str(study)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=cwd)
    assert done.returncode != 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.split()[1:2] == ["storage:"]]
    assert len(lines) == 1, done.stdout + done.stderr
    return lines[0]


@pytest.fixture
def study(tmp_path):
    study = tmp_path / "theirs.yaml"
    study.write_text(STUDY)
    made = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    return study


def test_a_file_this_user_may_not_write_fails_the_storage_check(tmp_path, study):
    db = tmp_path / "theirs.db"
    if os.geteuid() == 0:
        os.chown(db, 4242, 4242)
        db.chmod(0o644)
    else:
        db.chmod(0o444)
    try:
        assert storage_line(study, tmp_path) == (
            f"fail  storage: sqlite:///{db}: {db} cannot be written by this user (Permission denied); run as the "
            "user who can, or copy the study to a storage you can write (tuner study copy ... --to-storage URL)")
    finally:
        db.chmod(0o644)


def test_a_file_in_a_folder_this_user_may_not_write_fails_it_too(tmp_path, study):
    db = tmp_path / "db" / "theirs.db"
    db.parent.mkdir()
    (tmp_path / "theirs.db").rename(db)
    study.write_text(STUDY.replace("name: theirs", f"name: theirs\nstorage: sqlite:///{db}"))
    db.chmod(0o666)
    if os.geteuid() == 0:
        os.chown(db.parent, 4242, 4242)
    db.parent.chmod(0o555)
    try:
        assert storage_line(study, tmp_path) == (
            f"fail  storage: sqlite:///{db}: cannot write in {db.parent}: Permission denied; choose a folder "
            "you can write to")
    finally:
        db.parent.chmod(0o755)
