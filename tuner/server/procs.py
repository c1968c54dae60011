"""Process identity and process groups: the only way the tuner signals a process.

Identity: a pid alone is not a process, since pids are reused. A process is its pid plus its start time
in clock ticks since boot (what ``/proc/PID/stat`` field 22 holds, and what psutil's own pid-reuse check
compares) on one boot (``boot_id``). Nothing here ever
kills by name: only whole process groups whose leader still matches a record (a group id cannot be
reused while its leader lives) or, when the leader is gone, the group members recorded by pid and
start time. Process facts come from psutil; Linux is required (``boot_id``, process groups).

Escapees. A server's child may leave the group (``os.setsid()``, or a double fork whose middle
process exits, as a daemonizing launcher does) and keep running: a wedged TP worker that holds the
port or the GPU memory, which ``killpg`` never reaches. Every launch therefore carries a mark, the
environment entry ``TUNER_SERVER_MARK=<random token>`` (:func:`new_mark`), which its descendants
inherit through fork and exec (Python's multiprocessing, as SGLang spawns its scheduler and workers,
passes the environment on). :func:`escapees` finds, outside the group, the live processes carrying
that one token or descending (by parent pid) from the leader: only processes descended from the one
the tuner started, never anything by name. A descendant that exec'd with a scrubbed environment and
whose parent already exited cannot be found.

Dying with the tuner. A server whose tuner is killed with ``kill -9`` gets no stop: on Linux its
leader is started with ``PR_SET_PDEATHSIG`` = SIGKILL (:func:`die_with_this_thread`), so the kernel
kills it the moment the tuner dies, instead of it serving on, holding the port and the GPUs, until
the next run's orphan cleanup. SGLang's scheduler and detokenizer processes arm the same signal
against their own parent (``kill_itself_when_parent_died`` in ``sglang/srt/utils/common.py``), so the
whole server goes; anything else left (an escapee, a child that does not arm it) is still found by
the record and the mark. The signal fires when the *thread* that forked the server ends, not the
process: it is armed only for a launch from the main thread, which lives as long as the tuner (every
launch of ``tuner study run`` and ``tuner launch`` is; a launch from another thread gets no such
signal and relies on the cleanup, as before).
"""

from __future__ import annotations

import logging
import os
import ctypes
import secrets
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

log = logging.getLogger("tuner.server")

#: The environment variable that marks a launch's processes (see the module's docstring).
MARK_VAR = "TUNER_SERVER_MARK"
_TICKS_PER_S = os.sysconf("SC_CLK_TCK")
_GONE = (psutil.NoSuchProcess, psutil.AccessDenied, ProcessLookupError, PermissionError)


@dataclass(frozen=True)
class ProcStat:
    pid: int
    ppid: int
    pgid: int
    sid: int
    state: str  #: psutil's status: "running", "sleeping", "disk-sleep", "zombie" (exited, not yet reaped), ...
    start_ticks: int  #: start time in clock ticks since boot

    @property
    def alive(self) -> bool:
        return self.state not in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD)


def _start_ticks(proc: psutil.Process, boot: float | None = None) -> int:
    """Clock ticks from boot to the process's start. psutil reports the start as epoch seconds, the
    ticks over ``SC_CLK_TCK`` plus the boot time: taking the boot time back off gives the ticks, which
    (unlike epoch seconds) no clock step can move, so a record stays comparable across runs. ``boot``:
    psutil's boot time, read once for a whole table (:func:`all_stats`), else read here."""
    return round((proc.create_time() - (psutil.boot_time() if boot is None else boot)) * _TICKS_PER_S)


def read_stat(pid: int, boot: float | None = None) -> ProcStat | None:
    """The process ``pid`` now, or None when there is no such process (``boot``: see :func:`_start_ticks`)."""
    try:
        return _stat_of(psutil.Process(pid), boot)
    except _GONE:
        return None


def _stat_of(proc: psutil.Process, boot: float | None) -> ProcStat:
    with proc.oneshot():
        return ProcStat(proc.pid, proc.ppid(), os.getpgid(proc.pid), os.getsid(proc.pid), proc.status(),
                        _start_ticks(proc, boot))


def process_alive(pid: int, start_ticks: int | None) -> bool:
    """Whether ``pid`` is still the process that started at ``start_ticks`` (a reused pid is not)."""
    st = read_stat(pid)
    return st is not None and st.alive and start_ticks is not None and st.start_ticks == start_ticks


def read_cmdline(pid: int) -> list[str] | None:
    try:
        return psutil.Process(pid).cmdline()
    except _GONE:
        return None


def boot_id() -> str:
    """This boot's random id (psutil has none: its boot time moves when the clock is stepped)."""
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return ""


def all_stats(born_from: int | None = None) -> list[ProcStat]:
    """Every process now in the table (zombies included). The boot time is read once for the table:
    psutil reads /proc/stat for it at each call (QA: a study's server stops, which poll the group every
    0.1 s, spent a tenth of a run's CPU here, and more the more processes the node runs).

    ``born_from`` (clock ticks since boot): only the processes started at that tick or later (less
    :data:`BORN_MARGIN_TICKS`); the others cost one read of their start time, not a whole look
    (QA qa227: a stop read all of every process on the node, 0.1-0.2 ms each, three times and more)."""
    boot = psutil.boot_time()
    if born_from is not None and born_from > time.clock_gettime(time.CLOCK_BOOTTIME) * _TICKS_PER_S:
        # Later than now (the kernel's start times count from boot, as CLOCK_BOOTTIME does; no
        # process starts in the future): a record edited or damaged on disk, not a launch's start.
        # Trusted, it would pass over every process of the server: every process is looked at whole.
        born_from = None
    if born_from is None:
        return [st for st in (read_stat(pid, boot) for pid in psutil.pids()) if st is not None]
    low = born_from - BORN_MARGIN_TICKS
    out = []
    for pid in psutil.pids():
        try:
            proc = psutil.Process(pid)  # reads the start time (psutil's pid-reuse check)
            if _start_ticks(proc, boot) >= low:
                out.append(_stat_of(proc, boot))
        except _GONE:
            pass
    return out


#: The slack under ``born_from`` (:func:`all_stats`), in clock ticks: a minute. A start in ticks is
#: psutil's epoch start less the boot time, and the kernel's boot time (``btime`` in /proc/stat, whole
#: seconds) can move by a second when the clock is stepped between two reads: a process started just
#: before the launch, or the launch read a step apart, is looked at whole all the same.
BORN_MARGIN_TICKS = 60 * _TICKS_PER_S


def _in_group(pid: int, pgid: int) -> bool:
    try:
        return os.getpgid(pid) == pgid
    except OSError:  # gone
        return False


def group_members(pgid: int, only: set[tuple[int, int]] | None = None) -> list[ProcStat]:
    """Live (non-zombie) processes of group ``pgid``; with ``only``, just those whose
    ``(pid, start_ticks)`` is listed. Only the group's processes are read whole: the others are told
    apart by one getpgid(2) each (a stop polls this every 0.1 s, on a node of thousands of processes)."""
    boot = psutil.boot_time()
    stats = (read_stat(pid, boot) for pid in psutil.pids() if _in_group(pid, pgid))
    return [st for st in stats if st is not None and st.pgid == pgid and st.alive
            and (only is None or (st.pid, st.start_ticks) in only)]


#: prctl(2)'s option: the signal this process gets when the thread that forked it ends.
PR_SET_PDEATHSIG = 1


def die_with_this_thread():
    """A ``preexec_fn`` for a server's ``Popen`` that has the kernel SIGKILL the server when the
    calling thread ends (``PR_SET_PDEATHSIG``; see the module docstring), or None where that would be
    wrong or is impossible: not Linux, or not the main thread (a thread that ends before its server
    would kill it)."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here, not in the forked child
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def arm() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the tuner died between the fork and the prctl: no signal will come
            os.kill(os.getpid(), signal.SIGKILL)

    return arm


def new_mark() -> str:
    """A fresh token for one launch's ``TUNER_SERVER_MARK`` (128 random bits: no other launch's)."""
    return secrets.token_hex(16)


def _carries_mark(pid: int, mark: str) -> bool:
    try:
        return psutil.Process(pid).environ().get(MARK_VAR) == mark
    except _GONE:  # gone, or another user's process (not ours: unreadable)
        return False


def escapees(pgid: int, *, root: int | None = None, mark: str | None = None,
             outside_only: bool = True, born_from: int | None = None) -> list[ProcStat]:
    """Live processes outside group ``pgid`` that belong to it all the same: those carrying
    ``TUNER_SERVER_MARK=mark`` and those descended (parent pid after parent pid) from ``root`` or
    from any of them. Empty without ``root`` and ``mark``. ``outside_only=False``: the group's own
    such processes too (when the group cannot be signalled as a whole: its leader is gone).

    ``born_from``: the start (clock ticks since boot, :attr:`ProcStat.start_ticks`) of the launch's
    leader, the process the tuner started with ``mark`` in its environment (its record's
    ``start_ticks``); None when unknown. Every process this finds started at or after it: the mark is
    a token made fresh for that launch (:func:`new_mark`) and passed to the leader alone, so a process
    started earlier cannot have been given it, and a child starts after its parent, so none descends
    from the leader. The processes started earlier (on a busy node, nearly all) are then passed over
    after one read of their start time, their environment never read (:func:`all_stats`)."""
    stats = [st for st in all_stats(born_from) if st.alive]
    ours = {root} if root is not None else set()
    if mark:
        ours |= {st.pid for st in stats if (st.pgid != pgid or not outside_only)
                 and _carries_mark(st.pid, mark)}
    children: dict[int, list[int]] = {}
    for st in stats:
        children.setdefault(st.ppid, []).append(st.pid)
    todo = list(ours)
    while todo:
        for kid in children.get(todo.pop(), ()):
            if kid not in ours:
                ours.add(kid)
                todo.append(kid)
    return [st for st in stats if st.pid in ours and (st.pgid != pgid or not outside_only)]


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
                    only: set[tuple[int, int]] | None = None, mark: str | None = None,
                    born_from: int | None = None) -> bool:
    """SIGTERM (with SIGCONT, so a stopped process takes it at once), wait up to ``grace_s``, SIGKILL,
    wait, reap ``leader``: True when nothing is left.

    Without ``only`` the whole group is signalled (``killpg``): for a group whose leader is known to
    be ours. With ``only`` (``(pid, start_ticks)`` pairs), just those processes: the orphan case, where
    the leader is gone and only the recorded members are known to be ours.

    Escapees (:func:`escapees`) get the same signals, one by one, and count as left until they are
    gone: the processes outside the group carrying ``mark``, and (with ``leader``) the leader's
    descendants, collected before each signal, so those the leader had when the stop began are
    known even after it dies and they are reparented away. ``born_from``: the leader's start, as
    :func:`escapees` takes it (None: every process is looked at whole).
    """
    root = leader.pid if leader is not None else None
    fled: dict[tuple[int, int], ProcStat] = {}

    def remaining() -> list[ProcStat]:
        if leader is not None:
            leader.poll()  # reap it as soon as it exits
        # The group first, its escapees after. The other way round, a member that forked a child
        # into a session of its own and exited between the two looks (SIGTERM's handler spawning a
        # helper: QA qa110) was in neither, the stop was "done" and the child, holding the port, left
        # running. This way a child missed by the escapees' look was forked after the group's, by a
        # member alive in it: the next look finds it.
        # A zombie (exited, not yet reaped) is not counted: it holds no port, memory or GPU.
        listed = group_members(pgid, only)
        if root is not None or mark:
            # The leader's pid is walked only while it is unreaped: after that it may be reused.
            walk = root if leader is not None and leader.returncode is None else None
            # With ``only`` (leader gone) the group's members carrying the mark are ours too,
            # recorded or not (a member spawned after the record, or before the server was ready).
            for st in escapees(pgid, root=walk, mark=mark, outside_only=only is None, born_from=born_from):
                fled[(st.pid, st.start_ticks)] = st
        # Kept by pid and start time: one that exited and whose pid was reused is not ours.
        live = [st for key, st in fled.items() if process_alive(*key)]
        seen = {st.pid for st in listed}
        return listed + [st for st in live if st.pid not in seen]

    done = False
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 10.0)):
        members = remaining()
        if not members:
            done = True
            break
        # SIGTERM then SIGCONT: a stopped process (SIGSTOP) holds SIGTERM pending until it runs again,
        # so a stop of a frozen server (Ctrl-C, the orphan cleanup; a trial found hung is SIGKILLed
        # first) waited out the whole grace and SIGKILLed it, its own shutdown never run (QA: 20 s of
        # a 20 s grace, then SIGKILL); SIGCONT lets it take the SIGTERM now, as systemd's stop does
        # (KillSignal, then SIGCONT). SIGKILL needs no help.
        for each in ((sig, signal.SIGCONT) if sig == signal.SIGTERM else (sig,)):
            if only is None:
                signal_group(pgid, each)
                _signal_each([st for st in members if st.pgid != pgid], each)
            else:
                _signal_each(members, each)
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
