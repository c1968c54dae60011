"""The server tests start real process groups: every one of them is gone when the session ends."""

from __future__ import annotations

import os
import signal
import time

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
    for st in left:  # do not leak them into other tests, then fail
        try:
            os.kill(st.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    assert not left, f"processes left behind: {left}"
