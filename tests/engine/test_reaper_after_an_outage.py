"""The reaper after a storage outage this process saw (tuner/engine/workers.py, reap_dead_trials):
nobody's heartbeat could land meanwhile, so no trial is judged dead by time -- neither another host's
by its stale heartbeat, nor one no worker named by its age -- until the heartbeat grace and one
heartbeat interval have passed since the outage (a beat sent just after it takes up to an interval to
land). A real outage of a real SQLite file (moved away); its moment is then read on a clock shifted
forward (tuner.engine.patience's ``time``), so no test waits out the grace."""

from __future__ import annotations

import sqlite3
from contextlib import closing
import time

import optuna
import pytest
from optuna.trial import TrialState

from tuner.engine import patience, workers
from tuner.engine.asktell import ask
from tuner.engine.patience import StorageUnavailable, fail_fast
from tuner.engine.storage import HEARTBEAT_GRACE_S, HEARTBEAT_INTERVAL_S, open_storage
from tuner.engine.workers import reap_dead_trials

DIST = {"x": optuna.distributions.IntDistribution(0, 9)}


class _Later:
    """``time`` with ``monotonic`` ``ahead_s`` seconds ahead."""

    def __init__(self, ahead_s: float):
        self.ahead_s = ahead_s

    def monotonic(self) -> float:
        return time.monotonic() + self.ahead_s

    def __getattr__(self, name):
        return getattr(time, name)


@pytest.fixture
def db(tmp_path):
    return tmp_path / "r.db"


@pytest.fixture
def study(db):
    storage = open_storage(f"sqlite:///{db}", patient=True)
    s = optuna.create_study(study_name="r", storage=storage)
    yield s
    storage.engine.dispose()


def see_an_outage(study, db) -> None:
    """This process fails to beat while the database file is away (as the heartbeat thread beats)."""
    trial = ask(study, DIST)
    db.rename(db.with_name(db.name + ".aside"))
    try:
        with fail_fast(), pytest.raises(StorageUnavailable):
            study._storage.record_heartbeat(trial._trial_id)
    finally:
        db.with_name(db.name + ".aside").rename(db)
    study._storage.set_trial_state_values(trial._trial_id, state=TrialState.COMPLETE, values=[1.0])


def state(study, trial) -> TrialState:
    return study._storage.get_trial(trial._trial_id).state


def test_another_hosts_stale_trial_waits_for_the_grace_and_one_interval_after_an_outage(study, db,
                                                                                        monkeypatch):
    trial = ask(study, DIST)
    trial.set_user_attr("worker", {"host": "another-node", "pid": 1, "start": 1})
    study._storage.record_heartbeat(trial._trial_id)
    with closing(sqlite3.connect(db)) as conn, conn:  # its last beat an hour ago: stale by any grace
        conn.execute("UPDATE trial_heartbeats SET heartbeat = datetime('now', '-1 hour')")
    see_an_outage(study, db)
    assert reap_dead_trials(study) == [] and state(study, trial) == TrialState.RUNNING
    # past the grace, but within the interval after it: a beat sent after the outage may not have landed
    monkeypatch.setattr(patience, "time", _Later(HEARTBEAT_GRACE_S + HEARTBEAT_INTERVAL_S / 2))
    assert reap_dead_trials(study) == [] and state(study, trial) == TrialState.RUNNING
    monkeypatch.setattr(patience, "time", _Later(HEARTBEAT_GRACE_S + HEARTBEAT_INTERVAL_S + 1))
    reap_dead_trials(study)  # Optuna's stale check fails it (its numbers are not among those returned)
    assert state(study, trial) == TrialState.FAIL


def test_a_trial_no_worker_named_is_not_judged_by_its_age_right_after_an_outage(study, db, monkeypatch):
    monkeypatch.setattr(workers, "UNNAMED_AFTER_S", 0.0)  # any age is old enough
    trial = ask(study, DIST)  # its worker was killed while the sampler proposed it: never named
    see_an_outage(study, db)
    assert reap_dead_trials(study) == [] and state(study, trial) == TrialState.RUNNING
    monkeypatch.setattr(patience, "time", _Later(HEARTBEAT_GRACE_S + HEARTBEAT_INTERVAL_S + 1))
    assert reap_dead_trials(study) == [trial.number] and state(study, trial) == TrialState.FAIL
