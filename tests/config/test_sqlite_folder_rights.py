"""An SQLite storage in another user's folder this user may not search (mode 0700).

QA (qa159): ``--storage sqlite:////x/p3/demo.db`` said "no usable database file (Permission
denied); fix the path": the path is right, the folder's rights keep this user out. Now the line
names the folder and that fix. Run in a new user namespace (``unshare --user``, no uid mapped), where
root's capabilities do not reach the folder: as root it is another uid's (4242), otherwise this
user's own of mode 0000.
"""

import subprocess
import sys

from support.model_study import one_launch_study
from support.rights import UNSHARE_USER, make_theirs

STUDY = one_launch_study("demo")


def test_a_folder_this_user_may_not_search_is_named_with_the_rights_fix(tmp_path):
    (tmp_path / "demo.yaml").write_text(STUDY)
    shut = tmp_path / "p3"
    shut.mkdir()
    make_theirs(shut, 0o700)
    url = f"sqlite:///{shut / 'demo.db'}"
    try:
        done = subprocess.run([*UNSHARE_USER, sys.executable, "-m", "tuner", "study", "run", "--dry-run",
                               "demo.yaml", "--storage", url],
                              capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, cwd=tmp_path)
        assert done.returncode == 2, done.stderr
        assert done.stderr.strip().splitlines() == [
            f"error: --storage: {url!r}: {shut} cannot be searched by this user (Permission denied), so no "
            f"database file in it can be opened; run as the user who can, or have its owner let you in (e.g. "
            f"chmod g+x {shut}, and its group yours)"]
        assert done.stdout == ""
        assert sorted(p.name for p in tmp_path.iterdir()) == ["demo.yaml", "p3"]  # nothing written
    finally:
        shut.chmod(0o700)
