"""A host-wide exclusive lock on the GPUs a real SGLang server uses: one tuner's server at a time.

Contract.

* Who holds it: every :class:`tuner.server.launcher.ServerProcess` with ``server.backend: sglang``
  (a trial, the baseline, a confirmation, ``tuner launch``), from just before its server is launched
  until :meth:`~tuner.server.launcher.ServerProcess.stop` has stopped it (its process group gone, its
  GPU memory released or given up on). Backends ``sim`` and ``model`` use no GPU and take no lock.
* Which GPUs: the server's ``CUDA_VISIBLE_DEVICES`` (``server.env``'s if it sets it, else the tuner's
  own), split on commas. An index is locked as written; a GPU UUID (``GPU-8f3c...``, or a unique
  prefix of one, which CUDA accepts) as its index, read from ``nvidia-smi --query-gpu=index,uuid``,
  so a tuner naming GPU 0 by index and one naming it by UUID take one lock (nvidia-smi's index is
  the PCI order, CUDA's with ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` and on a node of identical GPUs). A
  UUID nvidia-smi does not list is locked as written. Where nvidia-smi is absent or fails, which
  index a UUID is cannot be told: the lock is ``all`` (never two servers on one GPU), said once. A
  MIG id (``MIG-...``) is locked as written (a MIG instance and its whole GPU are not known to
  overlap). Unset means every GPU of the node: the lock named ``all``. An index names a GPU only
  where CUDA numbers the GPUs as nvidia-smi does: with ``CUDA_DEVICE_ORDER=PCI_BUS_ID``, or on a node
  whose GPUs are all one model; under CUDA's default order (``FASTEST_FIRST``) on a node mixing
  models, CUDA's device 0 may be nvidia-smi's GPU 1, so a set naming GPUs by index is locked as
  ``all``, said once (the launcher tells it: :func:`tuner.server.gpus.indices_unplaced`). An empty value shows the
  server no GPU: no lock.
* How: :func:`fcntl.flock` on one file per GPU (``gpu-<name>.lock``) and one ``all.lock`` in a
  host-wide folder, :data:`DEFAULT_DIR` (``TUNER_GPU_LOCK_DIR`` overrides it), made mode 0o1777 like
  /tmp (a missing folder above it 0o755, whatever the umask), each file 0o666, so two users' tuners on one node see each other; a folder or file another
  user made is used as it is. An explicit set takes ``all.lock`` *shared* and each of its GPUs'
  files exclusive; ``all`` takes ``all.lock`` exclusive: ``all`` excludes everyone, disjoint
  explicit sets coexist, overlapping ones take turns. Files are taken in one order (``all.lock``
  first, then the GPU files sorted), so no two tuners deadlock.
* Released by :meth:`GpuLock.release`, and by the kernel when the holder exits in any way (``kill
  -9`` included): there is never a stale lock to clean up. The holder's pid, command line, host and
  study are written into each file it holds exclusively (emptied on release), to name it to waiters.
* What is waited for: a lock another tuner holds, for as long as it holds it, polled every
  :data:`POLL_S` (never a blocking ``flock``, so Ctrl-C and SIGTERM stop the wait at once: their
  handlers raise in the waiting thread, and whatever was taken is released on the way out). The
  wait is said once (stderr and the log) with the holder's name; it is not part of the server's
  startup timeout.
* What is never done: no holder is killed, signalled or asked to stop; no lock is stolen or broken,
  whatever its age.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import re
import shlex
import socket
import sys
import time
from pathlib import Path
from typing import Callable, Mapping, Sequence

from .gpus import NVIDIA_SMI, entry_index, gpu_indices_by_uuid

log = logging.getLogger("tuner.server")

#: the environment variable naming the lock folder (tests, or a node whose /tmp is not shared)
LOCK_DIR_VAR = "TUNER_GPU_LOCK_DIR"
DEFAULT_DIR = "/tmp/tuner-gpu-locks"
ALL = "all"
#: how often a waiting tuner tries again
POLL_S = 0.5
#: the lines about a lock widened to every GPU already said by this process
_TOLD: set[str] = set()


class GpuLockError(OSError):
    """The lock folder or a lock file cannot be used (permissions): nothing was launched."""


def lock_dir() -> Path:
    return Path(os.environ.get(LOCK_DIR_VAR) or DEFAULT_DIR)


def visible_gpus(env: Mapping[str, str] | None = None) -> tuple[str, ...] | None:
    """The GPUs a server started with ``env`` (added to this process's environment) may use: the
    entries of ``CUDA_VISIBLE_DEVICES``; None when it is unset (every GPU of the node)."""
    value = (env or {}).get("CUDA_VISIBLE_DEVICES", os.environ.get("CUDA_VISIBLE_DEVICES"))
    if value is None:
        return None
    return tuple(p.strip() for p in str(value).split(",") if p.strip())


def lock_names(gpus: Sequence[str], indices_by_uuid: Callable[[], dict[str, str] | None]
               ) -> tuple[tuple[str, ...] | None, str | None]:
    """The lock names of ``gpus`` (entries of ``CUDA_VISIBLE_DEVICES``) and a line to say (or None):
    a GPU UUID, or a unique prefix of one, becomes its index from ``indices_by_uuid()`` (called
    only if a UUID is given); other entries stay as written. ``(None, line)`` when a UUID's index
    cannot be told (``indices_by_uuid()`` is None): the caller locks every GPU."""
    names: list[str] = []
    known: dict[str, str] | None = None
    for gpu in gpus:
        if known is None and gpu.startswith("GPU-"):
            known = indices_by_uuid()
            if known is None:
                return None, (f"GPU lock: cannot tell which GPU index {gpu} is (nvidia-smi is absent or "
                              "failed); taking the lock on every GPU of the node; name GPUs by index in "
                              "CUDA_VISIBLE_DEVICES to lock only those")
        # an index as the number CUDA reads ("00" and "0": one GPU, one lock; QA, qa128: two lock
        # files, two studies on GPU 0 at once), a UUID as its index; an entry naming no single GPU
        # (a MIG id, a UUID matching none or several) is locked as written
        index = entry_index(gpu, known)
        names.append(gpu if index is None else index)
    return tuple(names), None


def gpus_label(gpus: Sequence[str] | None) -> str:
    return "all (CUDA_VISIBLE_DEVICES unset)" if gpus is None else ",".join(gpus)


def _without_secret(arg: str) -> str:
    """``arg`` with a URL's password (``user:password@``, up to the last ``@``: a password may hold
    one) and ``password=`` / ``sslpassword=`` query values shown as ``***``. The tuner's own
    :func:`tuner.engine.urls.redact` lies in a layer above this one; this is its rule by text."""
    scheme, sep, rest = arg.partition("://")
    if sep and "@" in rest:
        userinfo, _, location = rest.rpartition("@")
        user, colon, _ = userinfo.partition(":")
        if colon:
            arg = f"{scheme}{sep}{user}:***@{location}"
    return re.sub(r"(?i)([?&](?:ssl)?password=)[^&]*", r"\1***", arg)


def holder_info(study: str | None = None) -> dict:
    """What a lock file says of its holder: this process. The command line is shell-quoted (an
    argument with a space reads as one) with any storage password hidden: the file is readable by
    every user, and a waiting tuner prints it."""
    argv = list(sys.argv) or ["?"]
    head = os.path.basename(argv[0])
    if head == "__main__.py":
        head = "python -m " + os.path.basename(os.path.dirname(argv[0]))
    command = " ".join([head, shlex.join(_without_secret(a) for a in argv[1:])]).rstrip()
    return {"pid": os.getpid(), "host": socket.gethostname(), "command": command,
            "study": study, "since": time.time()}


def describe_holder(info: dict | None) -> str:
    if not info:
        return "holder unknown"
    text = f"pid {info.get('pid')}: {info.get('command') or '?'}"
    if info.get("study"):
        text += f"; study {info['study']}"
    return text


def _file_name(gpu: str) -> str:
    return "all.lock" if gpu == ALL else "gpu-" + re.sub(r"[^A-Za-z0-9._-]", "_", gpu) + ".lock"


def _read_info(path: Path) -> dict | None:
    try:
        info = json.loads(path.read_text() or "null")
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def _alive(pid) -> bool:
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except (PermissionError, TypeError, ValueError):
        return isinstance(pid, int)
    return True


def _say_stderr(line: str) -> None:
    try:
        os.write(2, (line + "\n").encode())
    except OSError:
        pass


def _make_shared(d: Path) -> None:
    """Make the lock folder ``d`` mode 0o1777 (like /tmp: every user's tuner adds its files, none
    removes another's), and each missing folder above it 0o755 whatever the umask: under ``umask 077``
    (QA, qa157: root's tuner made ``TUNER_GPU_LOCK_DIR=/scratch/locks/gpu``) a parent left 0o700 kept
    every other user out of a folder that is theirs too. A folder another tuner made meanwhile is used
    as it is."""
    missing = []
    while not os.path.isdir(d):
        missing.append(d)
        if d.parent == d:
            break
        d = d.parent
    for folder in reversed(missing):
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        os.chmod(folder, 0o1777 if folder is missing[0] else 0o755)


class GpuLock:
    """The lock on ``gpus`` (None: every GPU, the ``all`` lock; an empty tuple: no GPU, no lock).

    :meth:`acquire` waits until every file is taken; :meth:`release` lets them go (idempotent).
    ``say`` gets the one waiting line (default: stderr). ``numbered``: whether an index names
    nvidia-smi's GPU of that index for the server (False: :func:`tuner.server.gpus.indices_unplaced`,
    CUDA's default order on a node mixing GPU models): when not, a set with an index is ``all``."""

    def __init__(self, gpus: Sequence[str] | None, *, study: str | None = None,
                 directory: str | Path | None = None, say: Callable[[str], None] | None = None,
                 poll_s: float = POLL_S, nvidia_smi: str = NVIDIA_SMI, numbered: bool = True):
        self.gpus = None if gpus is None else tuple(gpus)
        self.numbered = numbered
        self.study = study
        self.directory = Path(directory) if directory is not None else lock_dir()
        self.say = say or _say_stderr
        self.poll_s = poll_s
        self.nvidia_smi = nvidia_smi
        self._held: list[tuple[int, bool]] = []  #: (fd, exclusive) in the order taken
        self._note: str | None = None  #: why every GPU is locked for an explicit set (plan())

    @property
    def held(self) -> bool:
        return bool(self._held)

    def plan(self) -> list[tuple[str, bool]]:
        """The files to take, in order: (name, exclusive). GPU UUIDs are read as indices
        (:func:`lock_names`; this may run ``nvidia-smi``)."""
        if self.gpus is None:
            return [(ALL, True)]
        if not self.gpus:
            return []
        if not self.numbered and any(entry_index(g, None) is not None for g in self.gpus):
            # CUDA's default order puts the fastest GPU first (CUDA C Programming Guide, "CUDA
            # Environment Variables"; SGLang and PyTorch leave it as it is): on an A100 (nvidia-smi 0) +
            # H100 (1) node, CUDA_VISIBLE_DEVICES=0 is the H100. Locked as "0", it let a tuner naming the
            # H100 by UUID (or by 1 under PCI_BUS_ID) launch on it at once (QA, qa187).
            self._note = (f"GPU lock: CUDA_VISIBLE_DEVICES={','.join(self.gpus)} names GPUs by index, and on this "
                          "node of different GPU models CUDA's default order (CUDA_DEVICE_ORDER is not "
                          "PCI_BUS_ID) need not be nvidia-smi's; taking the lock on every GPU of the node; "
                          "set server.env.CUDA_DEVICE_ORDER: PCI_BUS_ID (or name GPUs by UUID) to lock only those")
            return [(ALL, True)]
        names, self._note = lock_names(self.gpus, lambda: gpu_indices_by_uuid(self.nvidia_smi))
        if names is None:
            return [(ALL, True)]
        return [(ALL, False)] + [(g, True) for g in sorted(set(names))]

    def _open(self, name: str) -> int:
        d = self.directory
        if not d.is_absolute():
            # QA (qa167): TUNER_GPU_LOCK_DIR=locks was read from each tuner's own folder: two tuners
            # started in two folders each locked GPU 0 in theirs, and launched on it at once
            raise GpuLockError(errno.EINVAL, f"{LOCK_DIR_VAR}={d} is a relative path, read from each tuner's "
                               "own folder: tuners started in two folders would not see each other's locks; "
                               f"set {LOCK_DIR_VAR} to an absolute folder every tuner on this node can write")
        try:
            os.stat(d)
            exists = True
        except FileNotFoundError:
            exists = False
        except OSError as exc:  # a parent this user cannot enter (EACCES), a name too long: not a traceback
            raise GpuLockError(exc.errno, f"cannot reach the GPU lock folder {d} ({exc.strerror}); set "
                               f"{LOCK_DIR_VAR} to a folder every tuner on this node can write") from None
        if not exists:
            try:
                _make_shared(d)
            except OSError as exc:
                raise GpuLockError(exc.errno, f"cannot make the GPU lock folder {d} ({exc.strerror}); set "
                                   f"{LOCK_DIR_VAR} to a folder every tuner on this node can write") from None
        path = d / _file_name(name)
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except PermissionError:
            try:
                fd = os.open(path, os.O_RDONLY)  # another user's file without write access: flock works
            except OSError as exc:
                raise GpuLockError(exc.errno, f"cannot open the GPU lock file {path} ({exc.strerror}); "
                                   f"set {LOCK_DIR_VAR} to a folder every tuner on this node can "
                                   "write") from None
        try:
            if os.fstat(fd).st_uid == os.getuid():
                os.fchmod(fd, 0o666)  # against the umask: other users' tuners must open it too
        except OSError:
            pass
        return fd

    def _holders(self, name: str, exclusive: bool) -> str:
        """Who holds what ``name`` waits for, from the lock files."""
        if name == ALL and exclusive:  # held shared by explicit sets: name their GPU files' holders
            infos = []
            for p in sorted(self.directory.glob("gpu-*.lock")):
                info = _read_info(p)
                if info and _alive(info.get("pid")) and info not in infos:
                    infos.append(info)
            if not infos:
                infos = [_read_info(self.directory / _file_name(ALL))]
            return ", ".join(describe_holder(i) for i in infos)
        return describe_holder(_read_info(self.directory / _file_name(name)))

    def acquire(self) -> float:
        """Take every file, waiting for other tuners as long as they hold them; seconds waited.
        An exception (Ctrl-C, SIGTERM's) releases whatever was taken."""
        if self._held:
            return 0.0
        started = time.monotonic()
        said = False
        info = json.dumps(holder_info(self.study))
        plan = self.plan()
        if self._note and self._note not in _TOLD:  # once per process, not at every launch
            _TOLD.add(self._note)
            log.info("%s", self._note)
            self.say(self._note)
        try:
            for name, exclusive in plan:
                fd = self._open(name)
                try:
                    said = self._take(fd, name, exclusive, said)
                except BaseException:
                    os.close(fd)
                    raise
                self._held.append((fd, exclusive))
                if exclusive:
                    try:
                        os.ftruncate(fd, 0)
                        os.pwrite(fd, info.encode(), 0)
                    except OSError:
                        pass  # read-only file of another user: the lock holds, unnamed
        except BaseException:
            self.release()
            raise
        if not said:
            return 0.0
        waited = time.monotonic() - started
        log.info("GPUs %s taken after waiting %.0f s", gpus_label(self.gpus), waited)
        return waited

    def _take(self, fd: int, name: str, exclusive: bool, said: bool) -> bool:
        """Lock ``fd`` (the file of ``name``), trying every :attr:`poll_s`; the waiting line is said
        the first time a lock is found taken, unless ``said`` already. Whether it has been said."""
        mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                return said
            except OSError as exc:
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise
            if not said:
                said = True
                line = (f"waiting for GPUs {gpus_label(self.gpus)}: another tuner holds them "
                        f"({self._holders(name, exclusive)})")
                log.info("%s", line)
                self.say(line)
            time.sleep(self.poll_s)

    def release(self) -> None:
        """Let every file go (the holder's name emptied first); idempotent."""
        while self._held:
            fd, exclusive = self._held.pop()
            try:
                if exclusive:
                    try:
                        os.ftruncate(fd, 0)
                    except OSError:
                        pass
                fcntl.flock(fd, fcntl.LOCK_UN)
            except OSError:
                pass
            finally:
                os.close(fd)

    def __enter__(self) -> "GpuLock":
        self.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
