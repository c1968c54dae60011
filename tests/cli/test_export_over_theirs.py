"""``tuner study export -o FILE`` where FILE is another user's (mode 0644) in a folder this user may write.

QA (qa159): the export renamed its new file over it, which needs only the folder writable, and the
file was then this user's; `cp` and `>` refuse such a file. Now ``-o`` is refused in one line with
the fix, exit 2, nothing written. Run in a new user namespace (``unshare --user``, no uid mapped), where
root's capabilities do not reach the file: as root it is another uid's (4242) of mode 0644, otherwise
this user's own of mode 0444 (the same EACCES from open(2)).
"""

import os
import subprocess
import sys

from click.testing import CliRunner

from support.rights import OTHER_UID, UNSHARE_USER, make_theirs

from support.model_study import one_launch_study
from tuner.cli import cli

STUDY = one_launch_study("theirs")


def test_export_refuses_an_output_file_this_user_may_not_write(tmp_path):
    study = tmp_path / "theirs.yaml"
    study.write_text(STUDY)
    ran = CliRunner().invoke(cli, ["study", "run", str(study)], catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    out = tmp_path / "out.yaml"
    out.write_text("theirs: 1\n")
    make_theirs(out, 0o644)
    before = sorted(p.name for p in tmp_path.iterdir())
    done = subprocess.run([*UNSHARE_USER, sys.executable, "-m", "tuner", "study", "export", str(study),
                           "--pick", "knee", "-o", "out.yaml"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "error: -o: out.yaml: cannot be written by this user (Permission denied); give another file name, or "
        "have its owner let you write it (e.g. chmod g+w, and its group yours)"]
    assert out.read_text() == "theirs: 1\n"
    assert out.stat().st_uid == (OTHER_UID if os.geteuid() == 0 else os.geteuid())
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written beside it
