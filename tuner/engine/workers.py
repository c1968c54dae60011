"""Workers, heartbeats and claims: how several workers share one study through its storage alone.

* :class:`Worker` names the process that runs a trial (host, pid, start time), so a worker on the
  same host can tell at once that it died.
* :class:`Heartbeat` records Optuna heartbeats for a running trial from a background thread
  (ask/tell records none); a missed beat (the storage unreachable) is retried a second later, never
  raised: the thread neither dies nor blocks the worker.
* :func:`reap_dead_trials` fails RUNNING trials whose worker is gone and queues their settings again
  (:func:`tuner.engine.requeue.requeue`: the setting only). Right after a storage outage this
  process saw, nobody's heartbeat could land, so none is judged by its heartbeat until a grace
  period has passed.
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
from .patience import patient_backend
from .requeue import requeue
from .storage import HEARTBEAT_GRACE_S, HEARTBEAT_INTERVAL_S, MAX_RETRY

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

    def _record(self) -> bool:
        try:
            self.storage.record_heartbeat(self.trial_id)
            return True
        except Exception:  # noqa: BLE001 - a missed beat is retried; the trial must go on
            return False

    def _beat(self) -> None:
        wait = HEARTBEAT_INTERVAL_S
        while not self._stop.wait(wait):
            # After a missed beat, try again soon: the storage is back, the others must see us alive.
            wait = HEARTBEAT_INTERVAL_S if self._record() else min(1.0, HEARTBEAT_INTERVAL_S)

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
    patient = patient_backend(storage)
    if patient is None or not patient.recently_unreachable(HEARTBEAT_GRACE_S + HEARTBEAT_INTERVAL_S):
        fail_stale_trials(study)
    reaped = []
    for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if Worker.alive(t.user_attrs.get("worker")) is False:
            if storage.set_trial_state_values(t._trial_id, state=TrialState.FAIL):
                reaped.append(t.number)
                requeue(study, storage.get_trial(t._trial_id), MAX_RETRY)
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
