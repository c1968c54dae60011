"""Workers, heartbeats and claims: how several workers share one study through its storage alone.

* :class:`Worker` names the process that runs a trial (host, pid, start time), so a worker on the
  same host can tell at once that it died.
* :class:`Heartbeat` records Optuna heartbeats for a running trial from a background thread
  (ask/tell records none); a missed beat is retried on the next tick, never raised.
* :func:`reap_dead_trials` fails RUNNING trials whose worker is gone and queues their settings again.
* :func:`try_claim` / :func:`wait_for_claim`: claim-then-look, so two workers never measure the
  same effective setting (or the baseline) at once, with no coordinator.
"""

from __future__ import annotations

import os
import random
import socket
import threading
import time
from dataclasses import dataclass, field

from ..server.procs import process_alive, read_stat
from .storage import HEARTBEAT_INTERVAL_S

#: How often a worker waiting for another's claim looks again, in seconds.
POLL_S = 1.0


def _start_ticks(pid: int) -> int | None:
    st = read_stat(pid)
    return None if st is None else st.start_ticks


@dataclass(frozen=True)
class Worker:
    """Who runs a trial: enough to tell, on the same host, whether that process still lives."""

    host: str = field(default_factory=socket.gethostname)
    pid: int = field(default_factory=os.getpid)
    start: int | None = field(default_factory=lambda: _start_ticks(os.getpid()))

    def as_dict(self) -> dict:
        return {"host": self.host, "pid": self.pid, "start": self.start}

    @staticmethod
    def alive(d: dict | None) -> bool | None:
        """True/False for a worker on this host; None when it ran elsewhere (ask the heartbeat)."""
        if not d or d.get("host") != socket.gethostname():
            return None
        return process_alive(int(d["pid"]), d.get("start"))


class Heartbeat:
    """Records Optuna heartbeats for one running trial from a background thread (ask/tell does not)."""

    def __init__(self, storage, trial_id: int):
        self.storage, self.trial_id = storage, trial_id
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._beat, daemon=True, name=f"heartbeat-{trial_id}")

    def _record(self) -> None:
        try:
            self.storage.record_heartbeat(self.trial_id)
        except Exception:  # noqa: BLE001 - a missed beat is retried; the trial must go on
            pass

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_INTERVAL_S):
            self._record()

    def __enter__(self):
        if hasattr(self.storage, "record_heartbeat"):
            self._record()  # the first beat before anything else happens to the trial
            self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)


def reap_dead_trials(study) -> list[int]:
    """Fail RUNNING trials whose worker is gone and queue their parameters again.

    Workers on this host are checked by pid and start time at once; others by Optuna's heartbeat
    (``fail_stale_trials``, after the grace period). Returns the numbers of the trials failed here.
    """
    from optuna.storages import fail_stale_trials
    from optuna.trial import TrialState

    storage = study._storage
    if not hasattr(storage, "get_heartbeat_stale_trial_callback"):
        return []  # a storage without heartbeats (in-memory, for benchmarks): one process, no deaths
    fail_stale_trials(study)
    reaped = []
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if Worker.alive(t.user_attrs.get("worker")) is False:
            if storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL):
                reaped.append(t.number)
                callback = storage.get_heartbeat_stale_trial_callback()
                if callback is not None and t.params:
                    callback(study, storage.get_trial(t._trial_id))
    return reaped


def try_claim(study, trial, key: str) -> bool:
    """Claim ``key`` for the RUNNING ``trial``; True when no other running trial holds it.

    Claim, then look: every claimant writes its claim before reading the others', so of two racing
    workers at least one sees the other. Whoever sees another claim withdraws its own (and retries
    after a random pause): two workers can never both proceed, and at worst both step back once.
    """
    from optuna.trial import TrialState

    trial.set_user_attr("claim", key)
    running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    if any(t.number != trial.number and t.user_attrs.get("claim") == key for t in running):
        trial.set_user_attr("claim", None)
        return False
    return True



def wait_for_claim(study, key: str) -> None:
    """Wait until no running trial holds ``key`` (it finished, or its worker died)."""
    from optuna.trial import TrialState

    while True:
        reap_dead_trials(study)
        running = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        if not any(t.user_attrs.get("claim") == key for t in running):
            time.sleep(random.uniform(0, POLL_S))  # racing claimants must not retry in step
            return
        time.sleep(POLL_S)
