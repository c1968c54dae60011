"""A trial creation the database committed while the worker saw an error (the connection broke after
the COMMIT reached the server, before its answer came back): the patient storage retries the call
(tuner/engine/patience.py), and Optuna's own retry of a failed commit inside ``_create_new_trial``
does too. Every other write the engine makes is an upsert or checked; a creation was not, and each
retry added the trial once more (QA, qa79, walking the writes of the trial loop for "raised but
actually committed"):

* a measurement re-homed as a new COMPLETE trial (tuner.engine.finish, its trial lost or finished by
  another worker meanwhile) was stored twice: two launches counted for one, and the readers'
  average of a setting's repeats (records.merge_repeats) took the one reading for two;
* a setting queued again (tuner.engine.requeue) was queued twice.

Now a trial created from a template (Optuna's ``add_trial``, ``enqueue_trial``) carries a creation id
(a system attribute), and a retry that finds a trial with that id in the database returns it instead
of adding another. Made here on a real SQLite file: the creation commits, then the driver's error.
"""

from __future__ import annotations

import sqlite3

import optuna
import pytest
import sqlalchemy
from optuna.distributions import IntDistribution
from optuna.storages import RDBStorage
from optuna.trial import TrialState, create_trial

from tuner.engine.asktell import ask
from tuner.engine.requeue import requeue
from tuner.engine.storage import open_storage

DIST = {"x": IntDistribution(0, 9)}


@pytest.fixture
def study(tmp_path):
    storage = open_storage(f"sqlite:///{tmp_path / 'created.db'}", patient=True)
    yield optuna.create_study(study_name="created", storage=storage, directions=["maximize"])
    storage.engine.dispose()


def commit_then_break(monkeypatch, times: int = 1) -> list[int]:
    """The next ``times`` trial creations commit, then raise the driver's error; returns the ids
    committed so."""
    original = RDBStorage._create_new_trial
    broke: list[int] = []

    def create(self, study_id, template_trial=None):
        frozen = original(self, study_id, template_trial)
        if len(broke) < times:
            broke.append(frozen._trial_id)
            raise sqlalchemy.exc.OperationalError("COMMIT", {}, sqlite3.OperationalError("database is locked"))
        return frozen

    monkeypatch.setattr(RDBStorage, "_create_new_trial", create)
    return broke


def in_the_database(study) -> list:
    fresh = RDBStorage(str(study._storage._backend.engine.url))
    try:
        return fresh.get_all_trials(study._study_id)
    finally:
        fresh.engine.dispose()


def test_a_re_homed_measurement_whose_commit_landed_is_stored_once(study, monkeypatch):
    broke = commit_then_break(monkeypatch)
    study.add_trial(create_trial(state=TrialState.COMPLETE, params={"x": 3}, distributions=DIST, values=[2.5],
                                 user_attrs={"status": "measured", "replayed_from": 0}))
    assert len(broke) == 1
    (held,) = in_the_database(study)  # before the fix: two COMPLETE trials of the one measurement
    assert held._trial_id == broke[0] and held.values == [2.5] and held.user_attrs["replayed_from"] == 0


def test_a_setting_queued_again_whose_commit_landed_is_queued_once(study, monkeypatch):
    trial = ask(study, DIST)
    study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)
    broke = commit_then_break(monkeypatch, times=2)  # the retry breaks too: three tries, one trial
    assert requeue(study, study._storage.get_trial(trial._trial_id))
    queued = [t for t in in_the_database(study) if t.state == TrialState.WAITING]
    assert len(broke) == 2 and len(queued) == 1 and queued[0].params == trial.params


def test_two_alike_templates_are_two_trials(study):
    """The creation id is the call's, not the content's: the same setting queued twice on purpose
    (two calls) is two trials."""
    for _ in range(2):
        study.enqueue_trial({"x": 4}, skip_if_exists=False)
    held = in_the_database(study)
    assert [t.system_attrs["fixed_params"] for t in held] == [{"x": 4}, {"x": 4}]
    assert [t.state for t in held] == [TrialState.WAITING, TrialState.WAITING]
