"""``tuner study run`` of a study whose SQLite file this user cannot write: another user's (root's,
mode 0644) or on a read-only file system (a read-only mount of a shared folder).

QA (qa157): the run started, and its first write met SQLite's "attempt to write a readonly
database", which a running worker takes for an outage: it said "does not answer ... retrying" and
waited TUNER_STORAGE_PATIENCE_S (10 minutes by default) before it stopped, exit 75. Now the check
made before anything is written says so in one line, exit 2. A read-only bind mount in a user and
mount namespace (``unshare``) makes the file unwritable for root (in CI) as for any user.
"""

import subprocess
import sys

from click.testing import CliRunner

from support.model_study import one_launch_study
from support.rights import READ_ONLY_MOUNT
from tuner.cli import cli

STUDY = one_launch_study("ro")



def test_a_storage_this_user_cannot_write_is_one_line_at_once(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    study = shared / "ro.yaml"
    study.write_text(STUDY)
    made = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert made.exit_code == 0, made.output
    before = (shared / "ro.db").read_bytes()
    env_patience = {"TUNER_STORAGE_PATIENCE_S": "3"}  # without the check: 3 s of waiting, not 10 minutes
    done = subprocess.run(
        [*READ_ONLY_MOUNT, str(shared),
         "env", *[f"{k}={v}" for k, v in env_patience.items()],
         sys.executable, "-m", "tuner", "study", "run", str(study), "--workdir", str(tmp_path / "wd")],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: {study}: storage: sqlite:///{shared / 'ro.db'}: {shared / 'ro.db'} cannot be written by this "
        "user (Read-only file system); run as the user who can, or copy the study to a storage you can write "
        "(tuner study copy ... --to-storage URL)"]
    assert "does not answer" not in done.stdout + done.stderr
    assert (shared / "ro.db").read_bytes() == before and not (tmp_path / "wd").exists()  # nothing written
