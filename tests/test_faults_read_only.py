"""``support.faults.read_only`` as a non-root user runs it: a folder made read-only can still be
entered and read, only not written (QA, qa157: it set mode 0444, which took the folder's search bit
too, and 6 tests of tests/cli/test_storage_folder_unwritable.py failed as a non-root user, on an
"unable to open database file" where they expect "cannot write in"). The check runs in a new user
namespace (``unshare --user``, no uid mapped): there the process's uid is not 0, so ``read_only``
takes its non-root branch, and root's capabilities do not reach the files, as for any user.
"""

import subprocess
import sys
from pathlib import Path

CHECK = """
import os, sys
from pathlib import Path
from support.faults import read_only

assert os.geteuid() != 0
folder = Path(sys.argv[1])
before = folder.stat().st_mode
with read_only(folder):
    assert sorted(p.name for p in folder.iterdir()) == ["kept.txt"]  # readable
    assert (folder / "kept.txt").read_text() == "kept"  # searchable: its files can be opened
    try:
        (folder / "new.txt").write_text("x")
    except PermissionError:
        pass
    else:
        raise AssertionError("a file was written in a read-only folder")
with read_only(folder / "kept.txt"):
    try:
        open(folder / "kept.txt", "a").close()
    except PermissionError:
        pass
    else:
        raise AssertionError("a read-only file was opened for writing")
    assert (folder / "kept.txt").read_text() == "kept"
assert folder.stat().st_mode == before
(folder / "new.txt").write_text("x")  # writable again
print("ok")
"""


def test_read_only_keeps_a_folder_searchable_for_a_non_root_user(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    (folder / "kept.txt").write_text("kept")
    done = subprocess.run(["unshare", "--user", sys.executable, "-c", CHECK, str(folder)],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
                          cwd=Path(__file__).parent)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
