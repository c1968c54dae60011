"""Metric names (optuna-dashboard's labels) on a study created before they existed: `run` adds
them to the study and to its one-direction baseline study, and tells a new baseline its figures."""

import optuna
from support.model_study import make_model_study

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import ModelBackend
from tuner.engine.runner import run_study
from tuner.engine.study import BASELINE_SUFFIX, open_study


def test_run_names_the_metrics_of_an_older_study(tmp_path):
    config = load_study(make_model_study(tmp_path, "old", n_trials=None))
    storage = open_study("old", config.storage)._storage
    # as such a study was made: no metric names, a one-direction baseline study told 0.0
    sid = storage.get_study_id_from_name("old")
    storage.set_study_system_attr(sid, "study:metric_names", None)
    optuna.delete_study(study_name="old" + BASELINE_SUFFIX, storage=storage)
    optuna.create_study(study_name="old" + BASELINE_SUFFIX, storage=storage, direction="maximize")
    assert open_study("old", config.storage).metric_names is None
    run_study(config, config.storage, ModelBackend("k2.6-tp8-pcie", load_suite("quick"), seed=1), n_trials=1)
    study = open_study("old", config.storage)
    assert study.metric_names == ["single_speedup", "speedup@32"]
    base = optuna.load_study(study_name="old" + BASELINE_SUFFIX, storage=storage)
    assert base.metric_names == ["single_tok_per_s"]  # one direction: the first figure
    [t] = base.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert t.values == [t.user_attrs["single_tok_per_s"]] and t.values[0] > 1
