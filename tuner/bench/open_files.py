"""The tuner's own open-file limit: a request the *client* could not open is not the server's failure.

A sweep at concurrency 32 holds 32+ sockets at once, beside the watchdog's, the server's log, the
journal and the storage. Under a low ``ulimit -n`` (a Slurm job's or a container's default) the
kernel refuses the client's ``socket()`` with ``EMFILE`` (this process) or ``ENFILE`` (the whole
system), and aiohttp reports it as a connection error, the same type as a refused connection. Read
as one, a setting was failed as ``request_errors`` (or its server as dead) for the tuner's own limit
(QA, qa217: ``prlimit --nofile=32:32 tuner study run``). :func:`check` turns such an error into
:class:`TunerOutOfFiles`, which ends the suite: no figure measured so is a figure of the server.
"""

from __future__ import annotations

import errno
import resource

#: errno values that mean the tuner, not the server, ran out of file descriptors
_OUT_OF_FILES = (errno.EMFILE, errno.ENFILE)
#: The soft open-file limit a tuner raises itself to, as far as the hard limit allows: SGLang's own
#: (``set_ulimit(target_soft_limit=65535)``, sglang/srt/utils/common.py, called as its engine starts)
TARGET_SOFT_LIMIT = 65535


class TunerOutOfFiles(RuntimeError):
    """The tuner could not open a connection or file: its own (or the system's) open-file limit.
    Nothing the suite measured after it can be trusted; ``partial`` is what it measured before (a
    :class:`tuner.bench.SuiteResult`, set by the runner), kept as a record, never as figures."""

    partial = None


def out_of_files(exc: BaseException | None) -> int | None:
    """``EMFILE`` or ``ENFILE`` when ``exc`` (or the OS error it wraps: aiohttp's ``os_error``, a
    cause, a context) is one; else None."""
    for _ in range(8):  # a chain, not a cycle: bounded all the same
        if exc is None:
            return None
        for e in (exc, getattr(exc, "os_error", None)):
            if isinstance(e, OSError) and e.errno in _OUT_OF_FILES:
                return e.errno
        exc = exc.__cause__ or exc.__context__
    return None


def raise_soft_limit() -> None:
    """Raise this process's soft ``RLIMIT_NOFILE`` towards :data:`TARGET_SOFT_LIMIT`, never past the
    hard limit (which only the administrator raises): a shell's or job's soft ``ulimit -n`` below what
    the sweep needs (Slurm and some containers give 1024 or less, with a hard limit far above) is no
    reason to stop. The servers the tuner launches inherit it, the baseline's and the trials' alike. A
    refusal (a sandbox) leaves the limit as it was: :func:`check` then names it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = TARGET_SOFT_LIMIT if hard == resource.RLIM_INFINITY else min(TARGET_SOFT_LIMIT, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
        except (ValueError, OSError):
            pass


def limit_text() -> str:
    """This process's open-file limit as ``ulimit -n`` shows it (``soft N, hard M``)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)

    def shown(n: int) -> str:
        return "unlimited" if n == resource.RLIM_INFINITY else str(n)

    return f"soft {shown(soft)}, hard {shown(hard)}"


def check(exc: BaseException, doing: str) -> None:
    """Raise :class:`TunerOutOfFiles` when ``exc`` is the tuner's own open-file limit; else return."""
    code = out_of_files(exc)
    if code is None:
        return
    which = ("the system's open-file table is full (ENFILE)" if code == errno.ENFILE else
             f"its open-file limit is reached (ulimit -n: {limit_text()})")
    raise TunerOutOfFiles(
        f"the tuner could not open a file or connection while {doing}: {which}; raise it where the tuner "
        "starts (`ulimit -n 65536` in its shell, a Slurm job's or a container's nofile limit) and run "
        "again: the server is not to blame, and nothing measured after this is kept") from None
