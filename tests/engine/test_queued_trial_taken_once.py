"""Two workers asking at the same moment take a queued (WAITING) trial once: one gets it, the other
the next one (or a new trial), never both the same.

Optuna starts a queued trial by reading the queue, then ``set_trial_state_values(RUNNING)``, which
reads the trial ``FOR UPDATE``, refuses one no longer WAITING, and updates it
(optuna/study/study.py, ``_pop_waiting_trial_id``; optuna/storages/_rdb/storage.py). SQLite has no
``FOR UPDATE``, and Python's sqlite3 driver begins the transaction only at the UPDATE, so the read
and the write were not one transaction: two workers that both read the trial WAITING both set it
RUNNING, and both ran it (QA, qa88: ``test_two_workers_never_measure_a_config_twice`` failed now
and then on a loaded machine, one seed launched by both workers, the second measurement re-homed as
a copy; two ``tuner study run`` processes on one SQLite file took the same queued trials too).
Their claims could not keep them apart: a claim is looked for on the *other* trials, and both held
the one trial. Now the start is one conditional UPDATE (``WHERE state = 'WAITING'``).

The interleaving is forced on a real SQLite file: each worker, about to write the start of the trial
it found, waits until the other is about to write too. Each worker has a storage of its own, as a
process does. (PostgreSQL's ``FOR UPDATE`` serialised Optuna's read already; the take's conditional
UPDATE runs there in every PostgreSQL test that asks for a seed.)
"""

from __future__ import annotations

import threading

import optuna
from optuna.distributions import IntDistribution
from optuna.trial import TrialState
from support.landed_moves import break_the_first_move
from support.together import hold_before, run_together

from tuner.engine.asktell import ask
from tuner.engine.storage import open_storage

DIST = {"x": IntDistribution(0, 9)}


def starting(sql: str) -> bool:
    return sql.startswith("UPDATE TRIALS SET STATE")


def test_two_workers_asking_at_once_take_a_queued_trial_once(tmp_path):
    url = f"sqlite:///{tmp_path / 'queue.db'}"
    first = optuna.create_study(study_name="queue", storage=open_storage(url, patient=True))
    first.enqueue_trial({"x": 3})
    workers = [optuna.load_study(study_name="queue", storage=open_storage(url, patient=True))
               for _ in range(2)]
    barrier = threading.Barrier(2)
    for study in workers:  # held about to write the queued trial's start (Optuna's UPDATE, or the take's)
        hold_before(study._storage._backend.engine, barrier, starting)
    asked, errors = run_together([lambda study=study: ask(study, DIST) for study in workers])
    assert not errors and None not in asked
    assert not barrier.broken  # both were about to start the queued trial at once
    ids = sorted(t._trial_id for t in asked)
    assert ids[0] != ids[1]  # before the fix: both workers held the queued trial
    trials = first.get_trials(deepcopy=False)
    assert [t.state for t in trials] == [TrialState.RUNNING, TrialState.RUNNING]
    queued, new = sorted(asked, key=lambda t: t.number)
    assert queued.params == {"x": 3} and "fixed_params" in trials[0].system_attrs
    assert "x" in new.params and "fixed_params" not in trials[1].system_attrs
    assert trials[0].datetime_start is not None
    for study in [first, *workers]:
        study._storage._backend.engine.dispose()


def test_a_take_whose_commit_landed_before_the_error_is_the_workers(tmp_path, monkeypatch):
    """The start of a queued trial committed, then the driver's error (the connection broke before
    the answer): the patient storage tries again, and the trial, RUNNING with this take's start
    time, is this worker's. Asked otherwise, the trial would stay RUNNING with nobody running it
    and the worker would go on to a new trial, its queued setting lost."""
    storage = open_storage(f"sqlite:///{tmp_path / 'landed.db'}", patient=True)
    study = optuna.create_study(study_name="landed", storage=storage)
    study.enqueue_trial({"x": 3})
    broke = break_the_first_move(monkeypatch)
    trial = ask(study, DIST)
    assert broke == [True]  # the first attempt took the trial, then its caller saw the error
    assert trial.params == {"x": 3}
    (held,) = study.get_trials(deepcopy=False)  # no new trial beside it
    assert held.state == TrialState.RUNNING and held._trial_id == trial._trial_id
    storage.engine.dispose()
