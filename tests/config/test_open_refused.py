"""The contract of :func:`tuner.config.files.open_refused`, the one rights check behind the storage's
read (``tuner.engine.storage``), the storage's write (``check_storage_writable``) and an output file
(``check_output``): the system's words when open(2) refuses this user for want of rights (EACCES,
EPERM, EROFS), None when the file opens or fails otherwise.

The three were copies that differed: the storage's write took every OSError for "cannot be written by
this user", the other two only a refusal of rights. The merged check keeps the latter: a process out
of file descriptors (EMFILE) is not refused the file, and is not told to run as another user.

Refusals are made real: another uid's file of mode 0600 in a user namespace (``unshare --user``, no
uid mapped: root's capabilities do not reach it), and a read-only bind mount (``unshare --mount``).
"""

import os
import resource
import subprocess
import sys

import pytest

from support.rights import READ_ONLY_MOUNT, UNSHARE_USER, make_theirs
from tuner.cli.study_target import check_storage_writable
from tuner.config.files import open_refused
from tuner.config.yamlfile import ConfigError

MODES = {"read": os.O_RDONLY, "write": os.O_WRONLY, "both": os.O_RDWR}
#: Prints open_refused's answer for the file $1 in each mode, one line each (as repr: None or the words).
ASK = ("import os, sys; from tuner.config.files import open_refused; "
       "[print(repr(open_refused(sys.argv[1], m))) for m in (os.O_RDONLY, os.O_WRONLY, os.O_RDWR)]")


def ask(argv: list[str], path) -> list[str]:
    done = subprocess.run([*argv, sys.executable, "-c", ASK, str(path)], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.parametrize("mode", sorted(MODES))
def test_a_file_this_user_may_open_is_no_refusal(tmp_path, mode):
    own = tmp_path / "own.db"
    own.write_bytes(b"x")
    assert open_refused(own, MODES[mode]) is None
    assert own.read_bytes() == b"x"  # opened for writing, nothing written


def test_a_missing_file_is_no_refusal_of_rights(tmp_path):
    assert open_refused(tmp_path / "gone.db", os.O_RDONLY) is None
    assert not (tmp_path / "gone.db").exists()  # nothing created


def test_another_users_file_is_refused_in_every_mode(tmp_path):
    theirs = tmp_path / "theirs.db"
    theirs.write_bytes(b"x")
    make_theirs(theirs, 0o600)
    try:
        assert ask(UNSHARE_USER, theirs) == ["'Permission denied'"] * 3
    finally:
        theirs.chmod(0o600)


def test_a_read_only_mount_refuses_writing_only(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "ro.db").write_bytes(b"x")
    said = ask([*READ_ONLY_MOUNT, str(shared)], shared / "ro.db")
    assert said == ["None", "'Read-only file system'", "'Read-only file system'"]


def test_no_file_descriptor_left_is_no_refusal_of_rights(tmp_path):
    """The storage's write check took any OSError for "cannot be written by this user": a process out of
    file descriptors was told to run as the user who can write the file."""
    db = tmp_path / "mine.db"
    db.write_bytes(b"")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (0, hard))  # every open(2) now fails with EMFILE
    try:
        answers = [open_refused(db, m) for m in MODES.values()]
        try:
            check_storage_writable(f"sqlite:///{db}", None, "--storage")
            said = ""
        except ConfigError as exc:
            said = str(exc)
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert answers == [None, None, None]
    assert "cannot be written by this user" not in said, said
