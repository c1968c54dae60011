"""A read of a study whose SQLite file this user cannot read: another user's, mode 0600.

QA (qa157): ``tuner study status`` said "cannot open: OperationalError: unable to open database
file; run it again once the storage answers (`tuner study run` waits for it)": no outage, so running
it again, or waiting, never helps. Now the line says the file cannot be read by this user and how
that is fixed. The command runs in a new user namespace (``unshare --user``, no uid mapped), where
root's capabilities do not reach the file: as root the file is another uid's (4242) of mode 0600,
otherwise this user's own of mode 0000 (the same EACCES from open(2)).
"""

import subprocess
import sys

from click.testing import CliRunner

from support.model_study import one_launch_study
from support.rights import UNSHARE_USER, make_theirs
from tuner.cli import cli

STUDY = one_launch_study("unread")


def test_a_storage_this_user_cannot_read_is_said_so_not_an_outage(tmp_path):
    study = tmp_path / "unread.yaml"
    study.write_text(STUDY)
    made = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    db = tmp_path / "unread.db"
    make_theirs(db, 0o600)
    before = sorted(p.name for p in tmp_path.iterdir())
    try:
        done = subprocess.run([*UNSHARE_USER, sys.executable, "-m", "tuner", "study", "status", str(study)],
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines() == [
            f"error: storage: sqlite:///{db}: cannot open: {db} cannot be read by this user (Permission "
            "denied); run as the user who can, or have its owner let you read it (e.g. chmod g+r, and its "
            "group yours)"]
        assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written
    finally:
        db.chmod(0o600)
