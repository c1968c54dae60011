"""Server records and orphan cleanup: how a later run finds servers a crashed tuner left behind.

Every launch writes ``<workdir>/servers/PID.json`` (pid, start time, boot, process group, command
line, owner) before the server is waited for, and removes it after the group is gone. A later run
(:func:`cleanup_orphans`) stops a recorded group only when its leader (pid and start time, same
boot) still matches the record, or, when the leader is gone, the recorded members; a record whose
owner (the tuner that launched it) still lives is left alone unless asked.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ..config.files import write_text_atomic
from .gpus import wait_gpu_memory_released
from .ports import wait_port_free
from .procs import boot_id, escapees, group_members, process_alive, read_cmdline, read_stat, terminate_group

log = logging.getLogger("tuner.server")


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
    #: the nvidia-smi indices of the server's GPUs, the order of ``gpu_memory_before_mib`` (None: every GPU)
    gpu_indices: list[str] | None = None
    #: the launch's ``TUNER_SERVER_MARK`` (:mod:`tuner.server.procs`): finds children that left the group
    mark: str = ""
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
        """Drop the record of a server that is gone. A record that cannot be removed (its folder
        went read-only, or its disk away, while the server ran) is left, with a warning: its
        server is stopped all the same, and the next run's :func:`cleanup_orphans` finds its
        leader gone and drops it. QA (qa96): a workdir remounted read-only mid-run raised
        ``OSError: Read-only file system`` here and ended the worker in a traceback, its
        stop half done."""
        if self.path is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("server record %s not removed (%s); the next run drops it", self.path,
                        exc.strerror or exc)

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
    recorded when it became ready are stopped (matched by pid and start time), and so are its members
    that carry the record's mark (recorded or not); in both cases so are the processes outside the
    group that carry the mark (children that left the group).
    Then the port is awaited free and the record removed.
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
        mark = rec.mark or None
        # Each of the server's processes started at or after its leader (procs.escapees)
        born_from = rec.start_ticks
        if state == "gone" and not group_members(rec.pgid, only) and not escapees(
                rec.pgid, mark=mark, outside_only=False, born_from=born_from):
            rec.remove()
            continue
        log.warning("stopping orphaned server pid %d (group %d, port %d) left by tuner %d",
                    rec.pid, rec.pgid, rec.port, rec.owner_pid)
        if not terminate_group(rec.pgid, rec.stop_grace_s, only=only, mark=mark, born_from=born_from):
            log.warning("orphaned server group %d did not exit; keeping its record", rec.pgid)
            continue
        if not wait_port_free(rec.host, rec.port, port_wait_s):
            log.warning("port %d still busy after stopping orphaned server %d", rec.port, rec.pid)
        if rec.backend == "sglang":
            wait_gpu_memory_released(rec.gpu_memory_before_mib, timeout_s=max(rec.stop_grace_s, 30),
                                     only=rec.gpu_indices)
        rec.remove()
        stopped.append(rec)
    return stopped
