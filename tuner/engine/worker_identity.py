"""Who runs a trial (:class:`Worker`): host, pid, process start time and PID namespace, recorded on
each trial it runs, so a reaper on the same host can tell at once whether that process still lives
(:func:`tuner.engine.workers.reap_dead_trials`) and the journal's replay whose entries are a dead
worker's (:func:`tuner.engine.finish.replay_journal`)."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass, field

from ..server.procs import process_alive, read_stat
from .records import whole_number


def _start_ticks(pid: int) -> int | None:
    st = read_stat(pid)
    return None if st is None else st.start_ticks


def _pid_namespace() -> str | None:
    """This process's PID namespace (``pid:[4026531836]``), None where Linux does not say."""
    try:
        return os.readlink("/proc/self/ns/pid")
    except OSError:
        return None


@dataclass(frozen=True)
class Worker:
    """Who runs a trial: enough to tell, on the same host, whether that process still lives.

    ``pidns``: the PID namespace its ``pid`` counts in. Containers sharing the node's host name
    (Kubernetes ``hostNetwork: true``, ``docker run --network host``) each number their processes
    from 1, so a pid of another's means nothing here (QA, qa180: two workers under ``unshare --pid``
    on one host each failed the other's live trial as "left running by a dead worker", and both
    settings were measured twice)."""

    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)
    start: int | None = field(default_factory=lambda: _start_ticks(os.getpid()))
    pidns: str | None = field(default_factory=_pid_namespace)

    def as_dict(self) -> dict:
        return {"host": self.host, "pid": self.pid, "start": self.start, "pidns": self.pidns}

    @staticmethod
    def alive(d: dict | None) -> bool | None:
        """True/False for a worker on this host; None when it ran elsewhere, or when ``d`` names no
        process (a value edited by hand or written by another tool: no mapping, no whole pid): ask the
        heartbeat. QA (qa175): a RUNNING trial whose ``worker`` was edited to ``5`` ended the next
        ``tuner study run`` in AttributeError's traceback before anything ran."""
        if not isinstance(d, dict) or d.get("host") != socket.gethostname():
            return None
        pid, start = d.get("pid"), d.get("start")
        start_read = start is None or (isinstance(start, int) and not isinstance(start, bool))
        if not whole_number(pid) or pid == 0 or not start_read:
            return None
        return process_alive(pid, start)

    @staticmethod
    def reapable(d: dict | None) -> bool | None:
        """:meth:`alive` for a reaper of RUNNING trials: None (ask the heartbeat) also for a worker of
        this host name in another PID namespace, whose pid this process cannot look up. A worker of a
        tuner that recorded no namespace is judged by its pid, as before. The journal's replay keeps
        :meth:`alive`: an entry is only ever this workdir's, and a container restarted on it has a new
        namespace while the one that wrote the entry is gone."""
        if isinstance(d, dict) and isinstance(d.get("pidns"), str) and d["pidns"] != _pid_namespace():
            return None
        return Worker.alive(d)
