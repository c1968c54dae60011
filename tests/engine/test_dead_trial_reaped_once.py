"""Two live workers that find one dead worker's trial at the same moment fail it once: one of them
fails it and queues its setting again, the other leaves it be, and neither raises.

The reaper failed a trial with Optuna's ``set_trial_state_values(FAIL)`` (its own for a dead worker
of this host, through Optuna's ``fail_stale_trials`` for another host's stale heartbeat), which
reads the trial ``FOR UPDATE``, refuses one already finished, and updates it
(optuna/storages/_rdb/storage.py). On SQLite there is no ``FOR UPDATE`` and Python's sqlite3 begins
the transaction only at the UPDATE: two reapers that both read the trial RUNNING both failed it and
both queued its setting (QA, qa92: two real reaper processes on one SQLite file released at once
on 100 dead trials of this host: 6 queued twice, and 15 times the later reaper's check raised
``UpdateFinishedTrialError`` out of ``reap_dead_trials``, which ends a worker; on 100 stale trials of
another host, 18 queued twice). On PostgreSQL the ``FOR UPDATE`` kept a setting from being queued
twice, but the later reaper of a dead worker of this host read the trial FAIL and raised (66 of
100). Now the reaper's FAIL is one conditional UPDATE (``WHERE state = 'RUNNING'``): of two, exactly
one fails it (0 of 100 queued twice, 0 raised, on both databases).

The interleaving is forced on a real SQLite file and a real PostgreSQL database: each reaper, about
to fail the trial (at Optuna's ``FOR UPDATE`` read or at the UPDATE, whichever it reaches first),
waits until the other is there too (tests/support/together.py). Each reaper has a storage of its
own, as a process does.
"""

from __future__ import annotations

import socket
import subprocess
import threading

import optuna
from optuna.distributions import IntDistribution
from optuna.trial import TrialState
from support.landed_moves import break_the_first_move
from support.together import another_hosts_stale_trial, hold_before, run_together

from tuner.engine.asktell import ask
from tuner.engine.records import INTERRUPTED
from tuner.engine.storage import open_storage
from tuner.engine.workers import reap_dead_trials

DIST = {"x": IntDistribution(0, 9)}



def about_to_fail(sql: str) -> bool:
    """The reaper's first write (or lock) of a trial's state: Optuna's ``FOR UPDATE`` read on
    PostgreSQL, its UPDATE on SQLite, or the conditional UPDATE."""
    return sql.startswith("UPDATE TRIALS SET STATE") or ("FROM TRIALS" in sql and "FOR UPDATE" in sql)


def reap_at_once(url: str, study_name: str) -> tuple[list, list[BaseException]]:
    """Two reapers, each with its own storage, run ``reap_dead_trials`` at the same moment, each
    held right before it fails a trial until the other is there too; returns what each returned
    and the exceptions raised."""
    reapers = [optuna.load_study(study_name=study_name, storage=open_storage(url, patient=True))
               for _ in range(2)]
    barrier = threading.Barrier(2)
    for study in reapers:
        hold_before(study._storage._backend.engine, barrier, about_to_fail)
    reaped, errors = run_together([lambda study=study: reap_dead_trials(study) for study in reapers])
    assert not barrier.broken  # both reapers were about to fail the trial at once
    for study in reapers:
        study._storage._backend.engine.dispose()
    return reaped, errors


def retries_of(study, number: int) -> list:
    return [t for t in study.get_trials(deepcopy=False) if t.user_attrs.get("retry_of") == number]


def test_two_workers_reap_a_dead_workers_trial_once(url):
    storage = open_storage(url, patient=True)
    study = optuna.create_study(study_name="reap", storage=storage)
    study.enqueue_trial({"x": 3})
    trial = ask(study, DIST)
    gone = subprocess.Popen(["true"])
    gone.wait()  # a worker of this host whose process is gone
    trial.set_user_attr("worker", {"host": socket.gethostname(), "pid": gone.pid, "start": 1})

    reaped, errors = reap_at_once(url, "reap")
    assert not errors  # before the fix, PostgreSQL: UpdateFinishedTrialError from the later reaper
    assert sorted(reaped) == [[], [trial.number]]  # before the fix, SQLite: both reaped it
    (retry,) = retries_of(study, trial.number)  # before the fix, SQLite: its setting queued twice
    assert retry.state == TrialState.WAITING and retry.params == {"x": 3}
    dead = study._storage.get_trial(trial._trial_id)
    assert dead.state == TrialState.FAIL and dead.user_attrs["status"] == INTERRUPTED
    assert dead.datetime_complete is not None
    storage.engine.dispose()


def test_two_workers_fail_another_hosts_stale_trial_once(url):
    storage = open_storage(url, patient=True)
    study = optuna.create_study(study_name="stale", storage=storage)
    trial = another_hosts_stale_trial(study, {"x": 5}, DIST)  # stale to every other worker

    _, errors = reap_at_once(url, "stale")
    assert not errors
    (retry,) = retries_of(study, trial.number)  # before the fix, SQLite: its setting queued twice
    assert retry.state == TrialState.WAITING and retry.params == {"x": 5}
    assert study._storage.get_trial(trial._trial_id).state == TrialState.FAIL
    storage.engine.dispose()


def test_a_reap_whose_commit_landed_before_the_error_queues_the_setting(tmp_path, monkeypatch):
    """The FAIL committed, then the driver's error (the connection broke before the answer): the
    patient storage tries again, and the trial, FAIL with this reap's completion time, is this
    worker's to queue again. Read otherwise (failed by another worker), nobody would queue it and
    its setting would be lost."""
    storage = open_storage(f"sqlite:///{tmp_path / 'landed.db'}", patient=True)
    study = optuna.create_study(study_name="landed", storage=storage)
    study.enqueue_trial({"x": 7})
    trial = ask(study, DIST)
    gone = subprocess.Popen(["true"])
    gone.wait()
    trial.set_user_attr("worker", {"host": socket.gethostname(), "pid": gone.pid, "start": 1})
    broke = break_the_first_move(monkeypatch)
    assert reap_dead_trials(study) == [trial.number]
    assert broke == [True]  # the first attempt failed the trial, then its caller saw the error
    (retry,) = retries_of(study, trial.number)
    assert retry.state == TrialState.WAITING and retry.params == {"x": 7}
    storage.engine.dispose()
