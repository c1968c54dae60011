"""A measurement's attributes are written in one transaction (``PatientRDBStorage.set_trial_attrs``,
used by ``tuner.engine.finish``): all of them or none, retried like any storage call."""

import optuna
import pytest
import sqlalchemy
from optuna.storages import RDBStorage
from optuna.trial import TrialState

from tuner.engine.asktell import ask, tell
from tuner.engine.finish import set_attrs
from tuner.engine.storage import open_storage


@pytest.fixture
def study(tmp_path):
    storage = open_storage(f"sqlite:///{tmp_path / 'a.db'}", patient=True)
    s = optuna.create_study(study_name="a", storage=storage, directions=["maximize", "maximize"])
    yield s
    storage.engine.dispose()


def commits(study) -> list:
    seen: list = []
    sqlalchemy.event.listen(study._storage._backend.engine, "commit", lambda conn: seen.append(1))
    return seen


def test_forty_figures_land_in_one_commit(study):
    trial = ask(study)
    seen = commits(study)
    user = {f"figure_{i}": {"tok_per_s": i * 1.5} for i in range(40)}
    set_attrs(study._storage, trial._trial_id, user, {"constraint:measured": -1.0})
    assert len(seen) == 1
    stored = study._storage.get_trial(trial._trial_id)
    assert {k: stored.user_attrs[k] for k in user} == user
    assert stored.system_attrs["constraint:measured"] == -1.0


def test_a_value_that_cannot_be_written_leaves_none_of_them(study):
    trial = ask(study)
    with pytest.raises(TypeError):
        set_attrs(study._storage, trial._trial_id, {"single_tok_per_s": 60.0, "bad": object(), "c32": 1.0})
    # the next write's commit must not carry the first value along
    study._storage.set_trial_user_attr(trial._trial_id, "note", "after")
    stored = study._storage.get_trial(trial._trial_id).user_attrs
    assert stored == {"note": "after"}


def test_a_finished_trial_refuses_them_all(study):
    trial = ask(study)
    tell(study, trial, [1.0, 2.0])
    with pytest.raises(optuna.exceptions.UpdateFinishedTrialError):
        set_attrs(study._storage, trial._trial_id, {"single_tok_per_s": 60.0})
    assert "single_tok_per_s" not in study._storage.get_trial(trial._trial_id).user_attrs


def test_a_commit_lost_on_the_way_is_retried_and_stores_each_once(study, monkeypatch):
    from tuner.engine import patience

    original = patience._set_trial_attrs
    broke = []

    def commit_then_break(storage, trial_id, user, system=None):
        original(storage, trial_id, user, system)
        if not broke:
            broke.append(trial_id)
            raise sqlalchemy.exc.OperationalError("COMMIT", {}, Exception("server closed the connection unexpectedly"))

    monkeypatch.setattr(patience.PatientRDBStorage, "set_trial_attrs",
                        patience._patient("set_trial_attrs", commit_then_break))
    trial = ask(study)
    set_attrs(study._storage, trial._trial_id, {"single_tok_per_s": 60.0, "status": "measured"})
    assert broke == [trial._trial_id]
    stored = study._storage.get_trial(trial._trial_id)
    assert stored.user_attrs == {"single_tok_per_s": 60.0, "status": "measured"}
    assert stored.state == TrialState.RUNNING
    assert isinstance(study._storage._backend, RDBStorage)
