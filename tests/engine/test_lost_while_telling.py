"""A trial the database loses while its measurement is being written (between the figures and the
constraints, or the files and the tell: a commit it acknowledged, then forgot) no longer kills the
worker with Optuna's ``KeyError: 'Record does not exist.'``: the measurement is re-homed as a new
trial (``replayed_from`` naming the lost number), once, and the run goes on (qa79's reproducer,
tuner.engine.finish.apply_finish). Made on a real SQLite file, the trial's rows deleted at the kill
point."""

from __future__ import annotations

import optuna
import pytest
from support.lost_rows import lose_the_running_trials
from support.model_study import make_model_study

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine import finish as finish_module
from tuner.engine.backends import ModelBackend
from tuner.engine.runner import run_study


@pytest.mark.parametrize("point", ["figures", "files"])
def test_a_trial_lost_while_its_measurement_is_written_is_rehomed(tmp_path, monkeypatch, point):
    config = load_study(make_model_study(tmp_path, n_trials=None))
    lost: list[list[int]] = []

    def at(name: str) -> None:
        if name == point and not lost:
            lost.append(lose_the_running_trials(config.storage))

    monkeypatch.setattr(finish_module, "kill_point", at)
    summary = run_study(config, config.storage, ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01,
                                                               seed=1), n_trials=3)
    assert lost and len(lost[0]) == 1, lost
    assert summary.measured == 3, summary
    study = optuna.load_study(study_name=config.name, storage=config.storage)
    done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    rehomed = [t for t in done if t.user_attrs.get("replayed_from") is not None]
    assert len(rehomed) == 1 and rehomed[0].user_attrs.get("status") == "measured", [t.user_attrs for t in done]
    assert len(done) == 3  # the lost trial's measurement once, the other two as told
