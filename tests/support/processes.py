"""Processes the tests start: which groups they started, and how to end and check one.

``STARTED_GROUPS`` collects the process groups a test started; ``tests/server/conftest.py`` checks
at the end of the session that none of them (and no child of the test process) is left.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

from tuner.server.procs import all_stats, read_stat

STARTED_GROUPS: set[int] = set()  # process groups tests started, checked at the end of the session


def left_behind(me: int, before: set[int]) -> list:
    """Live children of ``me`` not in ``before``, and live members of the groups tests started."""
    return [st for st in all_stats() if st.alive and (
        (st.ppid == me and st.pid not in before) or st.pgid in STARTED_GROUPS)]


@contextmanager
def ctrl_c_raises():
    """SIGINT raises KeyboardInterrupt in this process for the block, as in a terminal's foreground, and
    its handling is put back after. A test run started in the background of a script (``cmd &``, no job
    control) inherits SIGINT ignored, and Python then installs no handler: a test that sends SIGINT to
    itself saw nothing happen (QA: the frozen-PostgreSQL interrupt tests failed so, "DID NOT RAISE
    KeyboardInterrupt", in a suite run started with ``setsid bash -c '...' &``)."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


def signals_at_default(argv: list[str]) -> list[str]:
    """``argv`` run with SIGINT and SIGHUP at their default actions (the same pid: it execs), as from
    a terminal's foreground. A process inherits ignored signals: a test run started in the background
    of a script (``cmd &``: SIGINT ignored) or under ``nohup`` (SIGHUP ignored) would hand them to the
    tuner, which rightly leaves them ignored (tuner.server.signals._installable; Python installs no
    KeyboardInterrupt for an ignored SIGINT), and a test of what those signals do would fail."""
    reset = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
             "signal.signal(signal.SIGHUP, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])")
    return [sys.executable, "-c", reset, *argv]


def finish(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    for stream in (proc.stdout, proc.stderr):
        if stream:
            stream.close()


def gone(pid: int) -> bool:
    st = read_stat(pid)
    return st is None or not st.alive


def kill_if_left(pid: int | None) -> None:
    """SIGKILL ``pid`` if a test left it running (None: the test never learnt it), so that it does
    not leak into other tests: a process that left its group is not in ``STARTED_GROUPS``."""
    if pid is not None and not gone(pid):
        os.kill(pid, signal.SIGKILL)


def wait_until(cond, timeout_s: float = 30.0) -> bool:
    """Whether ``cond()`` came true within ``timeout_s`` (polled every 0.05 s; asked once more at the
    end, so a slow machine's last poll still counts)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if cond():
            return True
        time.sleep(0.05)
    return cond()
