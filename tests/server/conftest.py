"""The server tests start real process groups: every one of them is gone when the session ends."""

from __future__ import annotations

import os
import signal
import time

import psutil
import pytest
from support.processes import left_behind

from tuner.server.procs import all_stats


@pytest.fixture(scope="session", autouse=True)
def no_process_left_behind():
    """Every process a test here started is gone when the session ends (checked in /proc)."""
    me = os.getpid()
    before = {st.pid for st in all_stats() if st.ppid == me}
    yield
    deadline = time.monotonic() + 15
    while True:
        left = left_behind(me, before)
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    # what each one runs, read before the kill: a flake under load (one 'sleeping' child in its own
    # session, 2026-12-06) said only its pids, not which test's process it was
    said = [f"{st} running {_command_line(st.pid)}" for st in left]
    for st in left:  # do not leak them into other tests, then fail
        try:
            os.kill(st.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"processes left behind: {said}"


def _command_line(pid: int) -> str:
    try:
        return " ".join(psutil.Process(pid).cmdline())[:300] or "(no command line)"
    except psutil.Error as exc:
        return f"(unreadable: {type(exc).__name__})"
