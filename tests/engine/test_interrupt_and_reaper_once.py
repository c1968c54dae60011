"""A worker that fails its own trial (a Ctrl-C, a stall) while another worker's reaper fails the same
trial as stale: one of them fails it and queues its setting again, the other leaves it be, and
neither raises.

The worker's own handler read the trial RUNNING, marked it interrupted, queued its setting and then
told it FAIL (Optuna's ``set_trial_state_values``). A worker paused past the heartbeat grace (a
SIGSTOP, a suspended VM: the stall it reports on waking) is reaped by another host meanwhile: when
the reaper's FAIL landed between the worker's check and its tell, both queued the setting, and the
worker's tell raised ``UpdateFinishedTrialError`` (QA, qa93: on SQLite and on PostgreSQL alike, the
``FOR UPDATE`` does not help: the worker had queued before it locked). Now both fail the trial by
one conditional UPDATE (:func:`tuner.engine.workers.interrupt`), and only the one that moved it
queues it.

Forced on a real SQLite file and a real PostgreSQL database: the worker, about to write after its
check (its queueing before the fix, its conditional FAIL after), waits until the reaper has failed the
trial and queued it; the reaper, about to fail it, waits until the worker is there
(tests/support/together.py). Each has a storage of its own, as a
process does.
"""

from __future__ import annotations

import threading

import optuna
from optuna.distributions import IntDistribution
from optuna.trial import TrialState
from support.together import another_hosts_stale_trial, hold_until, run_together

from tuner.engine.records import INTERRUPTED
from tuner.engine.storage import open_storage
from tuner.engine.workers import interrupt, reap_dead_trials

DIST = {"x": IntDistribution(0, 9)}



def after_its_check(sql: str) -> bool:
    """The worker's first statement after it read its trial RUNNING and marked it: the retry's
    creation before the fix (Optuna's lock of the study row on PostgreSQL, its INSERT on SQLite), or
    the conditional FAIL. Held before the lock, the reaper's own retry does not wait on the worker."""
    return (sql.startswith("INSERT INTO TRIALS ") or sql.startswith("UPDATE TRIALS SET STATE")
            or ("FROM STUDIES" in sql and "FOR UPDATE" in sql))


def test_a_worker_and_a_reaper_fail_one_trial_once(url):
    storage = open_storage(url, patient=True)
    study = optuna.create_study(study_name="both", storage=storage)
    trial = another_hosts_stale_trial(study, {"x": 4}, DIST)  # stale to every other worker

    worker, reaper = (optuna.load_study(study_name="both", storage=open_storage(url, patient=True))
                      for _ in range(2))
    checked, reaped = threading.Event(), threading.Event()
    held = hold_until(worker._storage._backend.engine, reaped, after_its_check, here=checked)
    reaper_held = hold_until(reaper._storage._backend.engine, checked,
                             lambda sql: sql.startswith("UPDATE TRIALS SET STATE"))

    def reap():
        try:
            return reap_dead_trials(reaper)
        finally:
            reaped.set()

    _, errors = run_together([lambda: interrupt(worker, trial._trial_id, "the tuner stood still"), reap])
    # the worker had read its trial RUNNING and marked it, and was about to write, when the reaper failed it
    assert held and reaper_held
    retries = [t for t in study.get_trials(deepcopy=False) if t.user_attrs.get("retry_of") == trial.number]
    # before the fix: its setting queued twice, and the worker's tell raised (ValueError 'Cannot tell
    # a FAIL trial.', or UpdateFinishedTrialError when the FAIL landed after the tell's own read)
    assert (len(retries), [repr(e) for e in errors]) == (1, [])
    assert retries[0].state == TrialState.WAITING and retries[0].params == {"x": 4}
    failed = study._storage.get_trial(trial._trial_id)
    assert failed.state == TrialState.FAIL and failed.datetime_complete is not None
    assert failed.user_attrs["status"] == INTERRUPTED
    for s in (worker, reaper):
        s._storage._backend.engine.dispose()
    storage.engine.dispose()
