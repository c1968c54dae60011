"""An outage that begins while the reaper reads the database's clock
(:meth:`tuner.engine.db_clock.DatabaseClock.steady`, the first storage call of each look).

While the storage is away no worker's heartbeat can land, so the reaper judges no trial by its
heartbeat until every live worker has beaten again (:func:`tuner.engine.workers.reap_dead_trials`).
It asked whether an outage was recent before that clock read, which then waited the outage out: the
look went on to judge heartbeats at once, and a live worker of another host whose beats the outage
held back was failed, its setting queued again (QA, qa174). Now the question is asked after the
storage has answered.

Real SQLite file, really away (moved aside: every call fails until it is back, as on a network
mount that dropped), real patient storage and reaper, in-process (the process is not under test).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from contextlib import ExitStack

import optuna
from optuna.trial import TrialState

from tuner.engine import workers
from tuner.engine.storage import open_storage
from tuner.engine.workers import Worker, reap_dead_trials, start_trial


def test_an_outage_during_the_clock_read_spares_a_trial_whose_beats_it_held_back(tmp_path, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "30")
    # no heartbeat judged for a grace period and an interval after an outage: 3 s here, so the test ends soon
    monkeypatch.setattr(workers, "HEARTBEAT_GRACE_S", 2)
    monkeypatch.setattr(workers, "HEARTBEAT_INTERVAL_S", 1)
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    worker_study = optuna.create_study(study_name="away", storage=open_storage(url))
    reaper = optuna.load_study(study_name="away", storage=open_storage(url, patient=True))
    with ExitStack() as stack:  # a worker of another host (its pid means nothing here)
        trial = start_trial(worker_study, Worker(host="node-b.invalid", pid=1, start=1), stack)
    # its last beat landed an hour ago: the outage kept the next ones away (it beats again once back)
    with sqlite3.connect(db) as conn:
        conn.execute("UPDATE trial_heartbeats SET heartbeat = datetime('now', '-3600 seconds')")
    aside = tmp_path / "aside.db"
    os.rename(db, aside)  # the storage goes away before the reaper's look: its clock read meets it
    back = threading.Timer(1.5, os.rename, (aside, db))
    back.start()
    started = time.monotonic()
    try:
        reap_dead_trials(reaper)
    finally:
        back.join()
    assert time.monotonic() - started >= 1.0  # the look did meet the outage, and waited it out
    assert reaper._storage.get_trial(trial._trial_id).state == TrialState.RUNNING
    # its worker never beats again (dead): once every live worker would have beaten, it is failed
    time.sleep(workers.HEARTBEAT_GRACE_S + workers.HEARTBEAT_INTERVAL_S + 0.1)
    reap_dead_trials(reaper)
    assert reaper._storage.get_trial(trial._trial_id).state == TrialState.FAIL
