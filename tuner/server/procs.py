"""Process identity and process groups: the only way the tuner signals a process.

Identity: a pid alone is not a process, since pids are reused. A process is its pid plus its start time
(``/proc/PID/stat`` field 22, clock ticks since boot) on one boot (``boot_id``). Nothing here ever
kills by name: only whole process groups whose leader still matches a record (a group id cannot be
reused while its leader lives) or, when the leader is gone, the group members recorded by pid and
start time. Linux ``/proc`` is required.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger("tuner.server")

_PROC = Path("/proc")


@dataclass(frozen=True)
class ProcStat:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str  #: R, S, D, Z (zombie: exited, not yet reaped), ...
    start_ticks: int  #: start time in clock ticks since boot

    @property
    def alive(self) -> bool:
        return self.state not in ("Z", "X")


def read_stat(pid: int) -> ProcStat | None:
    """``/proc/PID/stat``, or None when there is no such process."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    # The command name (field 2) may hold spaces and parentheses: split after the last ')'.
    rest = raw[raw.rindex(")") + 2:].split()
    return ProcStat(pid, int(rest[1]), int(rest[2]), int(rest[3]), rest[0], int(rest[19]))


def process_alive(pid: int, start_ticks: int | None) -> bool:
    """Whether ``pid`` is still the process that started at ``start_ticks`` (a reused pid is not)."""
    st = read_stat(pid)
    return st is not None and st.alive and start_ticks is not None and st.start_ticks == start_ticks


def read_cmdline(pid: int) -> list[str] | None:
    try:
        raw = (_PROC / str(pid) / "cmdline").read_bytes()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    return [part.decode(errors="replace") for part in raw.split(b"\0")[:-1]]


def boot_id() -> str:
    try:
        return (_PROC / "sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def all_stats() -> list[ProcStat]:
    """Every process now in the table (zombies included)."""
    out = []
    for entry in _PROC.iterdir():
        if entry.name.isdigit():
            st = read_stat(int(entry.name))
            if st is not None:
                out.append(st)
    return out


def group_members(pgid: int, only: set[tuple[int, int]] | None = None) -> list[ProcStat]:
    """Live (non-zombie) processes of group ``pgid``; with ``only``, just those whose
    ``(pid, start_ticks)`` is listed."""
    return [st for st in all_stats() if st.pgid == pgid and st.alive
            and (only is None or (st.pid, st.start_ticks) in only)]


def signal_group(pgid: int, sig: int) -> bool:
    """Send ``sig`` to group ``pgid``; False when the group no longer exists."""
    try:
        os.killpg(pgid, sig)
        return True
    except ProcessLookupError:
        return False


def _signal_each(members: list[ProcStat], sig: int) -> None:
    for st in members:
        try:
            os.kill(st.pid, sig)
        except ProcessLookupError:
            pass


def terminate_group(pgid: int, grace_s: float, *, leader: subprocess.Popen | None = None,
                    only: set[tuple[int, int]] | None = None) -> bool:
    """SIGTERM, wait up to ``grace_s``, SIGKILL, wait, reap ``leader``: True when nothing is left.

    Without ``only`` the whole group is signalled (``killpg``): for a group whose leader is known to
    be ours. With ``only`` (``(pid, start_ticks)`` pairs), just those processes: the orphan case, where
    the leader is gone and only the recorded members are known to be ours.
    """
    def remaining() -> list[ProcStat]:
        if leader is not None:
            leader.poll()  # reap it as soon as it exits
        # A zombie (exited, not yet reaped) is not counted: it holds no port, memory or GPU.
        return group_members(pgid, only)

    done = False
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        members = remaining()
        if not members:
            done = True
            break
        if only is None:
            signal_group(pgid, sig)
        else:
            _signal_each(members, sig)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and not done:
            done = not remaining()
            if not done:
                time.sleep(0.1)
        if done:
            break
        if sig == signal.SIGTERM:
            log.warning("process group %d still running %.0f s after SIGTERM; sending SIGKILL",
                        pgid, grace_s)
    if leader is not None:
        try:
            leader.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    return done or not remaining()
