"""Files and folders this user may not use as another user's, made real for the tests of the rights
checks (:func:`tuner.config.files.open_refused`, the storage folder's search right): a command run in a
new user namespace (:data:`UNSHARE_USER`, no uid mapped) has none of root's capabilities over them, so
the kernel refuses it as it refuses any user, root in CI included.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

#: The uid (and gid) a path is given to make it another user's: no user of this machine, as a rule.
OTHER_UID = 4242
#: Runs a command in a new user namespace, no uid mapped: root's capabilities do not reach files there.
UNSHARE_USER = ["unshare", "--user"]
#: Runs "$@" with the folder $1 mounted read-only over itself (after :data:`READ_ONLY_MOUNT`'s
#: ``unshare``: new user and mount namespaces), so that it cannot be written by root as by any user.
READ_ONLY = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" && shift && exec "$@"'
READ_ONLY_MOUNT = ["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", READ_ONLY, "sh"]


def make_theirs(path: Path, mode: int) -> None:
    """Make ``path`` what another user's of ``mode`` is to this user under :data:`UNSHARE_USER`: as root,
    :data:`OTHER_UID`'s of that mode; otherwise this user's own, its owner's rights those ``mode`` gives
    others (0644 -> 0444, 0600 and 0700 -> 0000): open(2) then says the same EACCES."""
    if os.geteuid() == 0:
        os.chown(path, OTHER_UID, OTHER_UID)
        path.chmod(mode)
    else:
        path.chmod((mode & 0o077) | ((mode & 0o007) << 6))


def uid_without_passwd_entry() -> int:
    """A uid the passwd database has no entry for (a container run as ``-u 1234``): a process of it has
    no home folder to be had unless ``HOME`` says one."""
    taken = {p.pw_uid for p in pwd.getpwall()}
    return next(uid for uid in range(OTHER_UID, 65000) if uid not in taken)


#: ``HOME`` and the variables that name a cache folder in place of one under it (XDG's, Hugging Face's).
HOME_VARS = ("HOME", "XDG_CACHE_HOME", "HF_HOME", "HF_HUB_CACHE")


def without_home(monkeypatch) -> None:
    """No home folder to be had for the rest of the test: :data:`HOME_VARS` unset, and ``os.getuid()``
    a uid with no passwd entry (:func:`uid_without_passwd_entry`; the lookup itself is real)."""
    for var in HOME_VARS:
        monkeypatch.delenv(var, raising=False)
    unknown = uid_without_passwd_entry()
    monkeypatch.setattr(os, "getuid", lambda: unknown)
