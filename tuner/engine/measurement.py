"""What one measurement of a backend is (:class:`Measurement`), and the callbacks a backend takes.

Shared by every backend (:mod:`tuner.engine.backends`, :mod:`tuner.engine.model_backend`) and the
engine that records their measurements; see :mod:`tuner.engine.backends` for the contract.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

Record = Callable[["Measurement"], None]
Event = Callable[[str, dict], None]
#: ``on_stage(index, stage name, partial figures) -> stop``: called after every stage of the study's
#: order (:func:`tuner.engine.backends.study_plan`) but the last; true stops the suite there (the
#: trial is pruned)
OnStage = Callable[[int, str, Any], bool]


@dataclass
class Measurement:
    """What one measurement produced: figures, or why there are none."""

    figures: Any | None  #: a SuiteResult, or model figures; None when nothing was measured
    failure_class: str | None = None  #: see tuner.server.launcher (invalid_args, oom, ... crash_after_ready)
    failure_message: str | None = None
    log_tail: str | None = None
    log_path: str | None = None
    result_path: str | None = None  #: where the suite's JSON goes (written by the recorder)
    to_save: Any | None = None  #: what goes there: the SuiteResult (or the partial one of a crashed run)
    duration_s: float = 0.0
    command: list[str] = field(default_factory=list)
    #: modelled GPU seconds the measurement took (load and suite), when the backend models time
    #: (ModelBackend); None for a real measurement (``duration_s`` is its wall time)
    model_duration_s: float | None = None
    #: the stage of the study's order after which ``on_stage`` stopped the suite (the figures are
    #: then partial: a pruned trial); None when the suite ran to its end
    stopped_after: str | None = None


class WorkdirUnwritable(RuntimeError):
    """A launch could not write a file it needs under the workdir (a full or read-only disk): the
    server is stopped, the trial queued again, and the worker stops with one line (nothing was
    measured, so nothing is lost, and no setting is blamed for the disk)."""


#: CPython's words when the kernel refuses a thread (``threading.Thread.start``: ``clone`` failed
#: with EAGAIN), in a server's log: SGLang's processes are Python too, and so is the simulator
NO_THREAD = "can't start new thread"


class ServerOutOfThreads(RuntimeError):
    """The server could not start a thread (its log says CPython's :data:`NO_THREAD`): the limit on
    the user's processes and threads where it runs (``ulimit -u``, a cgroup's ``pids.max``; every
    process and thread of the user counts, other jobs' included) or a thread's stack that does not fit
    under ``ulimit -v``. No setting's fault, and the next setting would meet it alike: as with
    :class:`WorkdirUnwritable`, the server is stopped, the trial queued again, and the worker stops
    with one line naming the limit. QA (qa222): such a server looked hung, and the trial, or the
    baseline, failed as ``hung``."""


def server_out_of_threads(m: Measurement) -> ServerOutOfThreads | None:
    """:class:`ServerOutOfThreads` for a failed measurement ``m`` whose error line or log tail says
    the server could not start a thread, else None."""
    if m.failure_class is None or not any(NO_THREAD in (text or "") for text in (m.failure_message, m.log_tail)):
        return None
    return ServerOutOfThreads(
        f"the server could not start a thread (RuntimeError: {NO_THREAD}; log: {m.log_path}): the kernel "
        "refused it where the server runs: the limit on this user's processes and threads (ulimit -u, a "
        "cgroup's pids.max) or a thread's stack (ulimit -s) that does not fit under ulimit -v; no setting's "
        "fault: raise the limit or end some of this user's processes and run again")
