"""`tuner study run` on a study holding an objective value Optuna cannot read (a NaN, kept as NULL by
SQLite): the worker fails that trial, keeps what it stored, says so and goes on (QA: the run ended in
Optuna's AssertionError, and on the baseline status promised a new measurement the run never made).
tuner/engine/unreadable_trials.py."""

from __future__ import annotations

import optuna
from click.testing import CliRunner
from optuna.trial import TrialState
from support.model_study import model_study_yaml
from support.nan_value import store_nan
from support.prepared_once import prepared_once

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.engine.unreadable_trials import VALUES_ATTR, _fail, fail_unreadable_trials


def _study(tmp_path, n_trials: int):
    path = tmp_path / "nan.yaml"
    path.write_text(model_study_yaml("nan", "sqlite:///nan.db", n_trials, noise=0.02, seed=5))
    return path, load_study(path)


def _one_measured(tmp_path_factory):
    """A study of one launch (nan.yaml), its baseline and trial measured: run once per session
    (whichever xdist worker asks first), each caller a copy of its own to write in."""
    def build(folder):
        _run(_study(folder, 1)[0])

    path = prepared_once(tmp_path_factory, "nan-one", build) / "nan.yaml"
    return path, load_study(path)


def _run(path, *more):
    result = CliRunner().invoke(cli, ["study", "run", str(path), *more])
    assert result.exit_code == 0 and result.exception is None, result.output
    return result.output


def test_a_trial_whose_value_is_nan_is_failed_with_its_values_kept_and_the_run_goes_on(tmp_path):
    path, config = _study(tmp_path, 3)
    _run(path, "--n-trials", "2")
    study = optuna.load_study(study_name="nan", storage=config.storage)
    before = study.trials[1]
    assert before.state == TrialState.COMPLETE and before.user_attrs["status"] == "measured"
    store_nan(config, "nan", 1)

    out = _run(path)
    assert "warning: trial 1: its stored objective value is not a number" in out, out
    trials = optuna.load_study(study_name="nan", storage=config.storage).trials
    failed = trials[1]
    assert failed.state == TrialState.FAIL and failed.values is None
    assert failed.user_attrs["failure_class"] == "unreadable" and failed.user_attrs["status"] == "failed"
    # what storage held is kept: NULL for the NaN, the other objective's number as it was
    assert failed.user_attrs[VALUES_ATTR] == {"0": None, "1": before.values[1]}
    # the measurement's own figures are untouched
    assert failed.user_attrs["single_tok_per_s"] == before.user_attrs["single_tok_per_s"]
    # the run went on to its budget: a third launch, measured
    assert len(trials) >= 3 and trials[-1].state == TrialState.COMPLETE, [t.state for t in trials]
    assert [t.number for t in trials if t.state == TrialState.FAIL] == [1]


def test_failing_again_changes_nothing(tmp_path_factory):
    """A retry of the transaction after its commit landed (or a second worker doing the same at
    once) changes nothing: the values kept by the first are not overwritten with what is left."""
    path, config = _one_measured(tmp_path_factory)
    store_nan(config, "nan", 0)
    study = optuna.load_study(study_name="nan", storage=config.storage)
    assert [n for n, _ in fail_unreadable_trials(study)] == [0]
    kept = optuna.load_study(study_name="nan", storage=config.storage).trials[0].user_attrs[VALUES_ATTR]
    assert kept["0"] is None and isinstance(kept["1"], float)
    assert _fail(study._storage._backend, study._study_id, 0) is False  # the retry
    again = optuna.load_study(study_name="nan", storage=config.storage).trials[0]
    assert again.user_attrs[VALUES_ATTR] == kept and again.state == TrialState.FAIL
    assert fail_unreadable_trials(study) == []


def test_a_nan_baseline_is_measured_again_as_status_says(tmp_path_factory):
    path, config = _one_measured(tmp_path_factory)
    store_nan(config, "nan.baseline", 0)
    status = CliRunner().invoke(cli, ["study", "status", str(path)])
    assert "the next tuner study run measures it again" in " ".join(status.output.split()), status.output

    out = _run(path, "--add-trials", "1")
    assert "warning: baseline (trial 0): its stored objective value is not a number" in out, out
    base = optuna.load_study(study_name="nan.baseline", storage=config.storage).trials
    assert [t.state for t in base] == [TrialState.FAIL, TrialState.COMPLETE]
    assert base[0].user_attrs[VALUES_ATTR]["0"] is None
    assert base[1].user_attrs["status"] == "measured"
    status = CliRunner().invoke(cli, ["study", "status", str(path), "-f", "json"])
    assert status.exit_code == 0 and '"baseline_problem": null' in status.output, status.output
