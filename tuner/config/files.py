"""Writing files whole or not at all: every file a user or another process reads (exported configs,
reports, suite results, server records) is written to a temporary file beside it and renamed over it.

Temporary files are named ``.NAME.tuner-HOST-PID-XXXXXXXX.tmp`` beside ``NAME``. A writer killed
between writing and renaming (``kill -9`` during ``tuner study export``) cannot remove its own, so
the next write of the same file removes those this host's dead processes left (:func:`_clean_stale`):
the file's folder holds at most one leftover per killed writer, until that file is written again. A
live writer's temporary file is never touched (its pid still runs), nor another host's (a shared
folder: its pids mean nothing here).

Why one module of over 400 lines: how a file is written (renamed over, or written into: a device, a
pipe, a link's target) and the checks made before it (this user's rights, the folder, what a path
is) answer one question, "can this be written, and how": split, a check would judge a path by
other rules than the write that follows it (QA: ``-o /dev/stdout`` was checked as a link's target
the write never opens).
"""

from __future__ import annotations

import errno
import os
import re
import socket
import tempfile
from pathlib import Path
from typing import Sequence


def _host() -> str:
    return re.sub(r"[^A-Za-z0-9_.]", "_", socket.gethostname())[:40] or "host"


#: The most bytes of a file name (NAME_MAX on Linux and macOS filesystems), and what a temporary
#: file's name adds to its prefix: the pid (at most 10 digits), ``-``, mkstemp's 8 characters, ``.tmp``.
NAME_MAX = 255
_TAIL = 10 + 1 + 8 + 4


def _prefix(path: Path) -> str:
    """The start of every temporary file's name for ``path``, written by this host: the target's
    name cut (by whole characters) so that the temporary name fits in :data:`NAME_MAX` bytes (QA: a
    valid 245-byte ``-o`` name ended in "File name too long" once the report was rendered). Two
    long names with the same start share a prefix; only dead writers' leftovers are ever removed."""
    host = f".tuner-{_host()}-"
    name = path.name
    while len(f".{name}{host}".encode()) + _TAIL > NAME_MAX:
        name = name[:-1]
    return f".{name}{host}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process: alive
    return True


def _clean_stale(path: Path) -> list[Path]:
    """Remove the temporary files for ``path`` that dead writers of this host left; the removed."""
    prefix = _prefix(path)
    removed = []
    try:
        names = os.listdir(path.parent)
    except OSError:
        return removed
    for name in names:
        m = re.fullmatch(re.escape(prefix) + r"(\d+)-[^/]*\.tmp", name)
        if m and not _alive(int(m.group(1))):
            try:
                os.unlink(path.parent / name)
                removed.append(path.parent / name)
            except OSError:
                pass
    return removed


def _umask() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return umask


def _stage(path: Path, text: str, umask: int, staged: list[tuple[str, Path]]) -> str:
    """Write ``text`` to a temporary file beside ``path``, durably, with the usual permissions
    (umask), not ``mkstemp``'s private 0600; it is appended to ``staged`` at once, so the caller
    removes it whatever fails. An OSError writing it (a full disk) names ``path``."""
    _clean_stale(path)
    fd, tmp = tempfile.mkstemp(prefix=f"{_prefix(path)}{os.getpid()}-", suffix=".tmp", dir=path.parent)
    staged.append((tmp, path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except OSError as exc:  # a full disk: named by the file it was to be, not the temporary
        raise OSError(exc.errno, exc.strerror, str(path)) from exc
    os.chmod(tmp, 0o666 & ~umask)
    return tmp


def written_through(path: str | Path) -> Path:
    """The file a write to ``path`` lands in: ``path``, or for a symlink the file it points to (through
    every link), as a shell's ``>`` writes through a link. Renaming a new file over the link itself
    would cut it: QA (qa130), ``-o deploy.yaml``, a link to the shared ``current.yaml`` a deployment
    reads, made ``deploy.yaml`` a file of its own and left ``current.yaml`` at the old setting, exit 0."""
    if not Path(path).is_symlink():
        return Path(path)
    if written_into(path):
        # a device or a pipe behind the link (/dev/stdout: /proc/self/fd/1, a pipe whose "path",
        # pipe:[N], no open reaches): written into through the link, as `>` does
        return Path(path)
    return Path(os.path.realpath(path))


def write_atomic(files: Sequence[tuple[Path, str]]) -> None:
    """Write every ``(path, text)``: all to temporary files first, then rename each into place (a
    symlink's target, not the link: :func:`written_through`); a target that is no regular file (a
    device such as ``/dev/null``, a named pipe) is written into after the renames, as ``>`` does.

    A failure before the renames leaves no target touched and no temporary file behind (a kill:
    see the module docstring); an OSError writing a file (a full disk) names its target. Files get
    the usual permissions (umask): they are for sharing.
    """
    staged: list[tuple[str, Path]] = []
    umask = _umask()
    special: list[tuple[Path, str]] = []
    try:
        for path, text in files:
            target = written_through(path)
            if written_into(target):
                special.append((target, text))  # a device, a pipe: written into, never renamed over
                continue
            _stage(target, text, umask, staged)
        for tmp, path in staged:
            os.replace(tmp, path)
        for target, text in special:
            # QA: `report -o /dev/null` (as root) renamed a regular file over the device, and every
            # later `> /dev/null` on the machine wrote to that file (PostgreSQL's initdb then failed)
            try:
                with open(target, "w", encoding="utf-8") as fh:
                    fh.write(text)
            except OSError as exc:  # /dev/full: named by its target, as a staged file's error is
                raise OSError(exc.errno, exc.strerror, str(target)) from exc
    finally:
        for tmp, _ in staged:
            if os.path.exists(tmp):
                os.unlink(tmp)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """One file, whole or not at all (see :func:`write_atomic`)."""
    path = Path(path)
    write_atomic([(path, text)])
    return path


def write_new_file(path: str | Path, text: str) -> Path:
    """Write ``path`` whole, only if no file is there: ``FileExistsError`` (nothing written, the
    file untouched) when one is, even one made by another process meanwhile. Staged as
    :func:`write_atomic` stages, then hard-linked into place (``link`` never replaces a file, as
    ``rename`` does); where the filesystem has no hard links, created with ``O_EXCL`` instead."""
    path = Path(path)
    staged: list[tuple[str, Path]] = []
    try:
        tmp = _stage(path, text, _umask(), staged)
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise
        except OSError:  # no hard links here (some network and FUSE filesystems)
            with open(path, "x", encoding="utf-8") as fh:
                fh.write(text)
    finally:
        for tmp, _ in staged:
            os.unlink(tmp)
    return path


def unusable_path(path: str | Path) -> str | None:
    """Why nothing can be looked up at ``path`` (a name past the filesystem's NAME_MAX, a path past
    PATH_MAX, a symlink loop on the way, a folder this user may not search): the system's words;
    None when ``path`` exists or simply does not (a missing folder on the way: each caller says that
    its own way). pathlib's ``exists()`` and ``is_file()`` raise OSError for the first ones instead
    of answering (QA: a traceback from every command given such a path), and answer "no such file"
    for a loop, where ``resolve()`` then raised (QA: `run --workdir LOOP`, RuntimeError)."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno in (errno.ENOENT, errno.ENOTDIR, errno.EBADF):
            return None
        # a loop in the words the study file's keys use (tuner.config.study._resolved)
        return "a symlink loop" if exc.errno == errno.ELOOP else exc.strerror or str(exc)
    except ValueError as exc:  # a NUL byte
        return str(exc)
    return None


#: The most bytes the tuner appends to a folder it writes in (a workdir): its deepest files, e.g.
#: ``journal/set-aside/NAME.confirm-N-XXXXXXXX.json`` with a 100-character NAME, or
#: ``confirm/RUN/N-baseline/server.log``, with room to spare.
WORKDIR_DEPTH = 200


def _path_max(path: Path) -> int:
    """PATH_MAX of the filesystem ``path`` would be on (4096 on Linux)."""
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    try:
        return os.pathconf(probe, "PC_PATH_MAX")
    except (OSError, ValueError):
        return 4096


def dangling_link(path: str | Path) -> tuple[Path, str] | None:
    """``(link, its target)`` when ``path`` or a folder above it is a symlink to nothing (a scratch
    disk not mounted on this node): the tuner would make the target and every missing folder above
    it, on whatever disk holds them. None otherwise."""
    for p in (Path(path), *Path(path).parents):
        try:
            if p.is_symlink() and not p.exists():
                return p, os.readlink(p)
            if p.exists():
                return None
        except (OSError, ValueError):
            return None
    return None


def check_usable(path: str | Path, flag: str | None = None) -> None:
    """:class:`~tuner.config.yamlfile.ConfigError` for a path :func:`unusable_path` refuses, before
    anything is opened or written (pathlib's ``exists()`` and ``is_file()`` would raise): naming
    ``flag`` and the path, or, without a flag (a file a key or name led to), the path alone."""
    problem = unusable_path(path)
    if problem:
        from .yamlfile import ConfigError

        source, key = (flag, str(path)) if flag is not None else (path, "")
        raise ConfigError(source, key, f"is no usable path ({problem}); give a shorter or other path")


def check_writable(path: str | Path, flag: str, *, folder: bool = False) -> None:
    """Raise :class:`~tuner.config.yamlfile.ConfigError` naming ``flag`` unless ``path`` can be
    written: a file (``folder=False``) or a folder, which may not exist yet (its missing parents
    would be created); ``-`` is refused, as it is not standard output. Checked by creating and
    removing a temporary file in the nearest existing folder, which works for root too
    (``os.access`` says yes to root on any mode bits); nothing is left behind."""
    from .yamlfile import ConfigError

    if str(path) == "-":  # not stdout: it would name a file "-" in the working folder
        raise ConfigError(flag, "-", "is not standard output here; give a file name"
                          + ("" if folder else " (commands that print leave the flag out)"))
    check_usable(path, flag)
    path = Path(path)
    # the bytes the kernel counts: a name not in the file-system encoding (a Latin-1 folder on a UTF-8
    # machine, any non-ASCII one under LC_ALL=C PYTHONUTF8=0) holds lone surrogates, which UTF-8 refuses
    deepest = len(os.fsencode(path.absolute())) + WORKDIR_DEPTH
    if folder and deepest > _path_max(path):
        raise ConfigError(flag, str(path), f"is {deepest - WORKDIR_DEPTH} bytes long, and the files written under "
                          f"it need up to {WORKDIR_DEPTH} more, past this system's {_path_max(path)}; choose a "
                          "shorter path")
    link = dangling_link(path) if folder else None
    if link is not None:
        raise ConfigError(flag, str(path), f"{link[0]} is a symlink to {link[1]}, which does not exist (not "
                          "mounted?); create it, or fix the link (nothing is made through it)")
    if path.exists() and path.is_dir() != folder:
        raise ConfigError(flag, str(path), "is a folder; give a file name" if path.is_dir()
                          else "is a file; give a folder")
    existing = path if folder and path.exists() else path.parent
    while not existing.exists() and existing != existing.parent:
        existing = existing.parent
    if not existing.is_dir():
        raise ConfigError(flag, str(path), f"{existing} is a file, not a folder; choose another path")
    try:
        fd, tmp = tempfile.mkstemp(prefix=".tuner-check.", dir=existing)
    except OSError as exc:
        raise ConfigError(flag, str(path), f"cannot write in {existing}: {exc.strerror}; "
                          "choose a folder you can write to") from None
    os.close(fd)
    os.unlink(tmp)


#: How open(2) refuses this user a file for want of rights: its mode bits or ACL (EACCES), a rule above
#: them (EPERM: an immutable file, a security module), a read-only mount (EROFS, for writing).
_RIGHTS_REFUSED = (errno.EACCES, errno.EPERM, errno.EROFS)


def open_refused(path: str | Path, flags: int) -> str | None:
    """Why this user may not open the existing file ``path`` with ``flags`` (``os.O_RDONLY``,
    ``os.O_WRONLY`` or ``os.O_RDWR``): the system's words for it ("Permission denied", "Read-only file
    system") when open(2) refuses it for want of rights (:data:`_RIGHTS_REFUSED`); None when it opens,
    and None for any other failure (no such file, too many open files: no matter of this user's rights,
    and the caller's own open then says it). The file is opened and closed again at once: nothing is
    read, written or created. Asked of the kernel, not of ``os.access``, which says yes to root on any
    mode bits and knows nothing of a read-only mount; a file of another uid in a user namespace
    (``unshare --user``) is refused to root too.

    The one rights check of the storage's read (:mod:`tuner.engine.storage`), the storage's write
    (:func:`tuner.cli.study_target.check_storage_writable`) and an output file (:func:`check_output`);
    each says it in its own words.

    Opened non-blocking and never as a controlling terminal: a named pipe (FIFO) opened to read waits
    for a writer, forever (QA, qa174: ``tuner study create`` of a study whose SQLite storage path was a
    FIFO hung in the storage's read check); the rights are checked all the same (open(2))."""
    try:
        os.close(os.open(path, flags | os.O_NONBLOCK | os.O_NOCTTY))
    except OSError as exc:
        if exc.errno in _RIGHTS_REFUSED:
            return exc.strerror or os.strerror(exc.errno)
    return None


def sqlite_file_refused(path: Path) -> str | None:
    """Why this user cannot write the SQLite database ``path``, in the words ``study run`` and ``doctor``
    both say it: an existing file this user may not open for writing (another user's, mode 0644; an
    immutable file; a read-only mount: :func:`open_refused`, opened, nothing written), or a folder it
    cannot write (SQLite makes the file, and its journal beside it, there: :func:`check_writable`);
    None when it can, or when ``path`` is something else (a folder, a device: the storage's own open
    says what it is). Raises OSError where ``path``'s folder cannot be searched (the caller's words).

    Why asked before SQLite opens it: SQLite opens a file it may not write read-only, and a worker took
    the first write's "attempt to write a readonly database" for an outage, waiting 10 minutes (QA,
    qa157); ``doctor``'s probe (``BEGIN IMMEDIATE``, which needs no journal) passed it (QA, qa167)."""
    from .yamlfile import ConfigError

    if path.is_file():
        refused = open_refused(path, os.O_RDWR)
        if refused is not None:
            return (f"{path} cannot be written by this user ({refused}); run as the user who can, or copy "
                    "the study to a storage you can write (tuner study copy ... --to-storage URL)")
    elif path.exists():
        # a folder: the storage's own check names the file to give; a named pipe or a device SQLite
        # cannot hold (QA, qa174: create said "disk I/O error; run it again once the storage answers")
        kind = not_a_file(path)
        if kind in (None, "a folder"):
            return None
        return f"{path} is {kind}, not an SQLite database file; name a file for the study (sqlite:///PATH.db)"
    try:
        check_writable(path, "storage")
    except ConfigError as exc:
        return exc.message
    return None


def not_a_file(path: str | Path) -> str | None:
    """What ``path`` is when it exists (links followed) and is no regular file: "a folder", "a named
    pipe (FIFO)", "a device", "a socket"; None for a regular file, or nothing there (or nothing this
    user may look at: the caller's own checks say it)."""
    import stat

    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a socket" if stat.S_ISSOCK(mode) else "no regular file"


def written_into(path: str | Path) -> bool:
    """Whether an output at ``path`` is written into, as ``>`` writes, not renamed over: a device or a
    pipe, through links too (:func:`not_a_file`; ``/dev/null``, ``/dev/stdout``)."""
    return not_a_file(path) not in (None, "a folder")


def check_output(path: str | Path, flag: str, *, folder: bool = False) -> None:
    """An output a command writes (``-o`` of export, report and compare, ``--png``): the folder it
    goes in must exist, else :class:`~tuner.config.yamlfile.ConfigError` naming ``flag`` ("folder X
    does not exist; create it first"), and be writable (:func:`check_writable`). Nothing is created
    for it: a typo in a path must not grow a tree of folders, nor put the file where nobody looks. A
    ``folder`` output (``--png DIR``) is itself made, in a folder that exists. An existing file must be
    writable by this user, as ``cp`` and ``>`` require, though the rename that replaces it would not."""
    from .yamlfile import ConfigError

    path = Path(path)
    if str(path) != "-":  # check_writable says what "-" is
        check_usable(path, flag)
        if not folder and written_into(path):
            # a device or a pipe, through a link too (`-o /dev/null`, `-o /dev/stdout`): written into,
            # never renamed over (write_atomic), as `>` writes; its folder is none of its business (QA,
            # qa172: `report -o /dev/stdout | cat` said "/proc/PID/fd/pipe:[N]: cannot write in /proc/PID/fd")
            return
        link = path
        if not folder:  # a file is written through a link (written_through): its target is checked
            path = written_through(path)
        where = f" (where the symlink {link} points)" if path != link else ""
        if path.parent.exists() and not path.parent.is_dir():
            raise ConfigError(flag, str(link), f"{path.parent}{where} is a file, not a folder; choose another path")
        if not path.parent.is_dir():
            raise ConfigError(flag, str(link), f"folder {path.parent}{where} does not exist; create it first")
        if not folder and path.is_file():
            # The new file is renamed over the old one, which only needs the folder writable: another
            # user's file (mode 0644) in a shared folder became this user's. `cp` and `>` open the file
            # itself for writing, and refuse; so does this (QA, qa159). Opened, nothing written.
            refused = open_refused(path, os.O_WRONLY)
            if refused is not None:
                named = f"{path}{where} " if where else ""
                raise ConfigError(flag, str(link), f"{named}cannot be written by this user ({refused}); give "
                                  "another file name, or have its owner let you write it (e.g. chmod g+w, and "
                                  "its group yours)")
    check_writable(path, flag, folder=folder)
