"""A commit the database acknowledged and then forgot, at the moments of the trial loop after
``start_trial`` returned (the moments the random fault campaign named but did not reach: QA, qa79).

PostgreSQL with ``synchronous_commit = off`` restarted at once (``pg_ctl restart -m immediate``), or a
failover to a replica behind the primary, forgets the last commits it acknowledged; an SQLite file
put back from an older copy does the same to everything after the copy. Here the loss is made on a
real SQLite file by deleting the trial's rows at the named point (:mod:`tuner.engine.killpoints`),
as tests/engine/test_random_fault_moments.py does right after the trial's creation.

* lost before its launch (``asked``, ``claimed``, ``launching``: the read-back right before the
  launch, TrialRunner._still_ours, finds it gone): Optuna's ``KeyError: 'Record does not exist.'``
  from the next write killed the worker with a traceback; now the loss is read back and the sampler
  asked again, nothing measured, nothing counted;
* lost from its launch on: the finish re-homes the figures as a new trial (tuner.engine.finish); held
  before, guarded here.

A loss is always the newest commits (a suffix): the trial lost is the newest, and the next one
created takes its number.
"""

from __future__ import annotations

import optuna
import pytest
from optuna.trial import TrialState
from support.lost_rows import lose_the_running_trials, warned
from support.model_study import model_study_yaml

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine import trial as trial_module
from tuner.engine.backends import ModelBackend
from tuner.engine.records import MEASURED, launched, load_records
from tuner.engine.runner import run_study
from tuner.engine.study import create_study

BUDGET = 3


def make_config(folder):
    """A study of the performance model, its budget :data:`BUDGET`, no seed trials: every trial is
    the sampler's, created as it is asked for (so the trial lost is the newest, as in a real loss)."""
    path = folder / "lost.yaml"
    path.write_text(model_study_yaml("lost", f"sqlite:///{folder / 'lost.db'}", BUDGET, noise=0.01, seed=1)
                    + "default_seed_trials: false\n")
    config = load_study(path)
    create_study(config, config.storage)
    return config


def run_losing_at(config, monkeypatch, point: str):
    """Run the study to its budget, the worker's trial lost (once) at ``point``; returns what was
    lost, the events and the run's summary. A wait for other workers' launches fails the test at
    once: there is no other worker."""
    lost: list[int] = []

    def lose_at(name: str) -> None:
        if name == point and not lost:
            lost.extend(lose_the_running_trials(config.storage))

    events = []

    def on_event(kind: str, info: dict) -> None:
        events.append((kind, info))
        assert not (kind == "waiting" and "budget" in str(info.get("for"))), \
            "the worker waits for a launch in flight, and no other worker runs"

    monkeypatch.setattr(trial_module, "kill_point", lose_at)
    summary = run_study(config, config.storage, ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01,
                                                              seed=1), on_event=on_event)
    assert len(lost) == 1, f"nothing was lost at {point}"
    return lost, events, summary


def stored(config) -> list:
    storage = optuna.storages.RDBStorage(config.storage)
    try:
        return optuna.load_study(study_name=config.name, storage=storage).get_trials(deepcopy=False)
    finally:
        storage.engine.dispose()


@pytest.mark.parametrize("point", ["asked", "claimed", "launching"])
def test_a_trial_lost_before_its_launch_is_asked_again(tmp_path, monkeypatch, point):
    config = make_config(tmp_path)
    _, events, summary = run_losing_at(config, monkeypatch, point)
    assert summary.launches == BUDGET and summary.stopped_because.startswith("the study's budget")
    trials = stored(config)
    assert [t.state for t in trials].count(TrialState.RUNNING) == 0
    records = load_records(optuna.load_study(study_name=config.name, storage=config.storage))
    assert sum(launched(r.status, r.attrs) for r in records) == BUDGET
    assert all(not r.attrs.get("replayed_from") for r in records)  # nothing measured was lost, nothing re-homed
    lost = warned(events, "lost this trial")
    assert lost and all("before its launch" in m and "the SQLite file put back from an older copy" in m
                        for m in lost), lost


@pytest.mark.parametrize("point", ["measured"])
def test_a_trial_lost_from_its_launch_on_is_re_homed_once(tmp_path, monkeypatch, point):
    """Held before this change too (tuner.engine.finish re-homes a measurement whose trial is gone);
    guarded here with the loop: the figures are kept once, the worker goes on to the budget."""
    config = make_config(tmp_path)
    _, _, summary = run_losing_at(config, monkeypatch, point)
    assert summary.launches == BUDGET and summary.stopped_because.startswith("the study's budget")
    trials = stored(config)
    rehomed = [t for t in trials if t.user_attrs.get("replayed_from") is not None]
    assert len(rehomed) == 1 and rehomed[0].state == TrialState.COMPLETE
    assert rehomed[0].user_attrs["status"] == MEASURED and rehomed[0].values
    assert [t.state for t in trials].count(TrialState.RUNNING) == 0
    assert sum(t.state == TrialState.COMPLETE for t in trials) == BUDGET  # each launch once, none twice


def test_a_key_error_on_a_trial_the_database_still_holds_is_not_taken_for_a_loss(tmp_path, monkeypatch):
    """The loss is read back: a KeyError while the trial is there (a bug, not a lost commit) goes out
    as before, and the trial is not asked for again (no second trial, nothing counted twice)."""
    config = make_config(tmp_path)
    calls = []

    def resolve_fails(self, trial, requested):
        calls.append(trial.number)
        raise KeyError("some_key")

    monkeypatch.setattr(trial_module.TrialRunner, "_resolve", resolve_fails)
    with pytest.raises(KeyError, match="some_key"):
        run_study(config, config.storage, ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1))
    assert calls == [0]
