"""Processes the tests start: which groups they started, and how to end and check one.

``STARTED_GROUPS`` collects the process groups a test started; ``tests/server/conftest.py`` checks
at the end of the session that none of them (and no child of the test process) is left.
"""

from __future__ import annotations

import subprocess

from tuner.server.procs import all_stats, read_stat

STARTED_GROUPS: set[int] = set()  # process groups tests started, checked at the end of the session


def left_behind(me: int, before: set[int]) -> list:
    """Live children of ``me`` not in ``before``, and live members of the groups tests started."""
    return [st for st in all_stats() if st.alive and (
        (st.ppid == me and st.pid not in before) or st.pgid in STARTED_GROUPS)]


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
