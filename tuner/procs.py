"""The operating-system side of a server launch: process identity, process groups, the record files a
later run uses to find servers a crashed tuner left behind, ports, and GPU memory.

Identity: a pid alone is not a process, since pids are reused. A process is its pid plus its start time
(``/proc/PID/stat`` field 22, clock ticks since boot) on one boot (``boot_id``); a record also keeps the
command line. Nothing here ever kills by name: only whole process groups whose leader still matches a
record (a group id cannot be reused while its leader lives) or, when the leader is gone, the group
members recorded by pid and start time. Linux ``/proc`` is required for records and orphan cleanup.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .files import write_text_atomic

log = logging.getLogger("tuner.launcher")

NVIDIA_SMI = "nvidia-smi"
_PROC = Path("/proc")


class PortInUseError(RuntimeError):
    """The configured port is taken by a process the tuner did not start; nothing was launched."""

    def __init__(self, host: str, port: int):
        self.host, self.port = host, port
        super().__init__(f"port {port} on {host} is in use by another process; "
                         f"set server.port to a free port or 0")


# --------------------------------------------------------------------------------------------------
# Processes


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


# --------------------------------------------------------------------------------------------------
# Records


def records_dir(workdir: str | Path) -> Path:
    return Path(workdir) / "servers"


@dataclass
class ServerRecord:
    """What a later run needs to find, verify and stop one server: ``<workdir>/servers/PID.json``."""

    pid: int
    pgid: int
    start_ticks: int
    cmdline: list[str]
    boot_id: str
    host: str
    port: int
    backend: str
    log_path: str
    stop_grace_s: float
    started_at: float  #: wall clock, seconds since the epoch
    owner_pid: int  #: the tuner process that started the server
    owner_start_ticks: int
    gpu_memory_before_mib: list[int] | None = None
    #: ``[pid, start_ticks]`` of the group's processes once ready (SGLang's scheduler, TP workers)
    members: list[list[int]] = field(default_factory=list)
    path: Path | None = field(default=None, compare=False)

    def save(self, directory: Path) -> Path:
        """Write atomically (a reader never sees half a record)."""
        directory.mkdir(parents=True, exist_ok=True)
        self.path = directory / f"{self.pid}.json"
        data = {k: v for k, v in asdict(self).items() if k != "path"}
        return write_text_atomic(self.path, json.dumps(data, indent=2))

    @classmethod
    def load(cls, path: Path) -> "ServerRecord":
        data = json.loads(path.read_text())
        return cls(**data, path=path)

    def remove(self) -> None:
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def leader_state(self) -> str:
        """``"ours"``: the recorded leader is running; ``"gone"``: it exited; ``"reused"``: its pid
        now belongs to another process (or another boot), which must never be signalled."""
        if self.boot_id and self.boot_id != boot_id():
            return "reused"
        st = read_stat(self.pid)
        if st is None or not st.alive:
            return "gone"
        if st.start_ticks != self.start_ticks or read_cmdline(self.pid) != self.cmdline:
            return "reused"
        return "ours"

    def owner_alive(self) -> bool:
        return process_alive(self.owner_pid, self.owner_start_ticks)


def list_records(workdir: str | Path) -> list[ServerRecord]:
    """Every readable record under ``<workdir>/servers``; unreadable ones are logged and skipped."""
    out = []
    for path in sorted(records_dir(workdir).glob("*.json")):
        try:
            out.append(ServerRecord.load(path))
        except (OSError, ValueError, TypeError) as exc:
            log.warning("ignoring unreadable server record %s: %s", path, exc)
    return out


def cleanup_orphans(workdir: str | Path, *, include_live_owners: bool = False,
                    port_wait_s: float = 10.0) -> list[ServerRecord]:
    """Stop servers a dead tuner left running; returns the records of the servers stopped.

    For each record under ``<workdir>/servers``: a record whose owning tuner is still alive is left
    alone (another worker's server) unless ``include_live_owners``; a leader whose pid now belongs to
    another process is never signalled; a leader still running with the recorded start time and
    command line has its whole group stopped (SIGTERM, grace, SIGKILL); a gone leader's group members
    recorded when it became ready are stopped (matched by pid and start time). Then the port is
    awaited free and the record removed.
    """
    stopped = []
    for rec in list_records(workdir):
        if not include_live_owners and rec.owner_alive():
            log.info("server %d belongs to running tuner %d; leaving it", rec.pid, rec.owner_pid)
            continue
        state = rec.leader_state()
        if state == "reused":
            log.info("server record %s: pid %d is now another process; dropping the record",
                     rec.path, rec.pid)
            rec.remove()
            continue
        # Leader running: the group is ours (its id cannot be reused while the leader lives).
        # Leader gone: only the recorded members, matched by pid and start time, are known ours.
        only = None if state == "ours" else {(pid, ticks) for pid, ticks in rec.members}
        if state == "gone" and not group_members(rec.pgid, only):
            rec.remove()
            continue
        log.warning("stopping orphaned server pid %d (group %d, port %d) left by tuner %d",
                    rec.pid, rec.pgid, rec.port, rec.owner_pid)
        if not terminate_group(rec.pgid, rec.stop_grace_s, only=only):
            log.warning("orphaned server group %d did not exit; keeping its record", rec.pgid)
            continue
        if not wait_port_free(rec.host, rec.port, port_wait_s):
            log.warning("port %d still busy after stopping orphaned server %d", rec.port, rec.pid)
        if rec.backend == "sglang":
            wait_gpu_memory_released(rec.gpu_memory_before_mib, timeout_s=max(rec.stop_grace_s, 30))
        rec.remove()
        stopped.append(rec)
    return stopped


# --------------------------------------------------------------------------------------------------
# Ports


def _bind_probe(host: str, port: int) -> socket.socket:
    """Bind as an HTTP server would (SO_REUSEADDR: a TIME_WAIT leftover does not count as busy)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
    except BaseException:
        sock.close()
        raise
    return sock


def port_free(host: str, port: int) -> bool:
    """Whether a server could bind ``host:port`` now."""
    try:
        _bind_probe(host, port).close()
        return True
    except OSError as exc:
        if exc.errno in (errno.EADDRINUSE, errno.EACCES):
            return False
        raise


def pick_free_port(host: str) -> int:
    """A port the OS reports free on ``host`` (port 0 in the study)."""
    with _bind_probe(host, 0) as sock:
        return sock.getsockname()[1]


def ensure_port_free(host: str, port: int) -> None:
    """Raise :class:`PortInUseError` when ``host:port`` is taken."""
    if not port_free(host, port):
        raise PortInUseError(host, port)


def wait_port_free(host: str, port: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while True:
        if port_free(host, port):
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)


def _listening_inodes(port: int) -> set[int]:
    """Socket inodes listening on ``port`` (``/proc/net/tcp`` and ``tcp6``; state 0A = LISTEN)."""
    inodes = set()
    for name in ("tcp", "tcp6"):
        try:
            lines = (_PROC / "net" / name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            if len(parts) > 9 and parts[3] == "0A" and int(parts[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(int(parts[9]))
    return inodes


def listener_owned_by_group(port: int, pgid: int) -> bool | None:
    """Whether a process of group ``pgid`` holds the socket listening on ``port``.

    None when that cannot be told (no ``/proc/net/tcp``, no listener found); the launcher then trusts
    its pre-launch port check.
    """
    inodes = _listening_inodes(port)
    if not inodes:
        return None
    for st in group_members(pgid):
        fd_dir = _PROC / str(st.pid) / "fd"
        try:
            fds = list(fd_dir.iterdir())
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(fd)
            except OSError:
                continue
            if target.startswith("socket:[") and int(target[8:-1]) in inodes:
                return True
    return False


# --------------------------------------------------------------------------------------------------
# GPU memory


def gpu_memory_used_mib(nvidia_smi: str = NVIDIA_SMI) -> list[int] | None:
    """Memory used on each GPU (MiB) from ``nvidia-smi``; None where it is absent or fails."""
    exe = shutil.which(nvidia_smi)
    if exe is None:
        return None
    try:
        out = subprocess.run([exe, "--query-gpu=memory.used", "--format=csv,noheader,nounits"],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.warning("nvidia-smi failed: %s", exc)
        return None
    if out.returncode != 0:
        log.warning("nvidia-smi exited %d: %s", out.returncode, out.stderr.strip()[:200])
        return None
    try:
        return [int(float(x)) for x in out.stdout.split()]
    except ValueError:
        log.warning("unexpected nvidia-smi output: %r", out.stdout[:200])
        return None


def wait_gpu_memory_released(before_mib: list[int] | None, timeout_s: float, *,
                             tolerance_mib: int = 1024, nvidia_smi: str = NVIDIA_SMI) -> bool | None:
    """Wait until every GPU uses at most what it used before the launch (+ ``tolerance_mib``).

    None (and a log line) where nvidia-smi is absent; False when the deadline passes first.
    """
    deadline = time.monotonic() + timeout_s
    while True:
        now = gpu_memory_used_mib(nvidia_smi)
        if now is None:
            log.info("nvidia-smi not available; not waiting for GPU memory to be released")
            return None
        base = before_mib if before_mib and len(before_mib) == len(now) else [0] * len(now)
        limit = [b + tolerance_mib for b in base]
        if all(used <= lim for used, lim in zip(now, limit)):
            return True
        if time.monotonic() >= deadline:
            log.warning("GPU memory not released after %.0f s: %s MiB used (before launch: %s)",
                        timeout_s, now, before_mib)
            return False
        time.sleep(1.0)
