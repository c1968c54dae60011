"""A worker that stood still while it measured the baseline, failed as stale by another worker at
the moment it fails the trial itself, measures the baseline again instead of stopping.

After a stall (:class:`tuner.engine.stall.TunerStalled`) the worker looked at its baseline trial and,
RUNNING, told it FAIL: Optuna's ``set_trial_state_values`` reads the trial ``FOR UPDATE`` and
refuses a finished one. A worker that stood still past the heartbeat grace is exactly the one
another worker fails as stale: that FAIL landing between the look and the tell raised
``UpdateFinishedTrialError`` out of ``ensure_baseline`` and ended the worker (QA, qa93, PostgreSQL;
on SQLite, with no ``FOR UPDATE``, the later FAIL overwrote the first). Now the worker fails it by
one conditional UPDATE (:func:`tuner.engine.workers.fail_running`), and a trial failed first by
the other worker is left be.

Forced on a real SQLite file and a real PostgreSQL database: the worker, about to fail its trial
(the ``FOR UPDATE`` read or the UPDATE), waits until the reaper has failed it; the reaper, about to
fail it, waits until the worker is there (tests/support/together.py). Each has a storage of its own.
"""

from __future__ import annotations

import threading

import optuna
import pytest
from support.together import beat_an_hour_ago, hold_until

from tuner.engine.baseline import ensure_baseline
from tuner.engine.stall import TunerStalled
from tuner.engine.storage import open_storage
from tuner.engine.study import BASELINE_SUFFIX, create_baseline_study
from tuner.engine.workers import Worker, reap_dead_trials



class Stopped(Exception):
    """The second measurement's way out: the test ends there."""


def test_a_stalled_baseline_failed_by_a_reaper_meanwhile_is_measured_again(url):
    storage = open_storage(url, patient=True)
    study = optuna.create_study(study_name="s", storage=storage)
    study.set_user_attr("objectives", ["speedup@1"])
    create_baseline_study(study)
    worker = optuna.load_study(study_name="s", storage=open_storage(url, patient=True))
    reaper = optuna.load_study(study_name="s" + BASELINE_SUFFIX, storage=open_storage(url, patient=True))

    armed, checked, reaped = threading.Event(), threading.Event(), threading.Event()
    def failing_it(sql: str) -> bool:  # after the stall: Optuna's FOR UPDATE read, or the UPDATE
        return armed.is_set() and (sql.startswith("UPDATE TRIALS SET STATE")
                                   or ("FROM TRIALS" in sql and "FOR UPDATE" in sql))

    held = hold_until(worker._storage._backend.engine, reaped, failing_it, here=checked)
    reaper_held = hold_until(reaper._storage._backend.engine, checked,
                             lambda sql: sql.startswith("UPDATE TRIALS SET STATE"))
    measured = []

    def reap():
        try:
            reap_dead_trials(reaper)
        finally:
            reaped.set()

    def measure(trial, bstudy):
        measured.append(trial.number)
        if len(measured) > 1:
            raise Stopped()
        trial.set_user_attr("worker", {"host": "another-node", "pid": 1, "start": 1})
        beat_an_hour_ago(storage)  # stood still an hour: stale to every other worker
        threading.Thread(target=reap, daemon=True).start()
        armed.set()
        raise TunerStalled(3600)

    with pytest.raises(Stopped):  # before the fix, PostgreSQL: UpdateFinishedTrialError
        ensure_baseline(worker, Worker(), measure, emit=lambda *a: None, rebaseline=False)
    assert held and reaper_held  # the reaper failed the trial while the worker was about to
    assert measured == [0, 1]  # the stalled measurement was started again, on a new trial
    for s in (worker, reaper):
        s._storage._backend.engine.dispose()
    storage.engine.dispose()
