"""Ctrl-C between a trial's ask and its launch (QA, qa114: a real ``tuner study run`` sent SIGINT
0.65-1.55 s after its start, just after the baseline, printed ``Ctrl-C: stopping (no server is
running)`` and ``a trial that was running is queued again``, and left that trial RUNNING in 12 of 20
runs). The worker now fails it as interrupted and queues its setting before the run exits.

Two windows, both in process, on a real SQLite file, through the performance model: a SIGINT to
this process while the sampler proposes (held by start_trial until the trial names its worker, it
was raised as start_trial returned, before the trial was the runner's to queue: most of the
RUNNING ones); and a KeyboardInterrupt raised at the trial's kill points before the launch
(tuner.engine.killpoints), where SIGINT's handler raises it in the main thread."""

from __future__ import annotations

import os
import signal

import optuna
import pytest
from optuna.trial import TrialState
from support.model_study import make_model_study

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine import trial as trial_module
from tuner.engine.backends import ModelBackend
from tuner.engine import workers
from tuner.engine.runner import run_study
from tuner.server.signals import stop_on_signals


def stopped_trial_is_queued(config) -> None:
    """No trial left RUNNING: the one stopped is FAIL, interrupted, and its setting queued again."""
    study = optuna.load_study(study_name=config.name, storage=config.storage)
    states = [(t.number, t.state.name, t.user_attrs.get("status")) for t in study.trials]
    assert not [t for t in study.trials if t.state == TrialState.RUNNING], states
    (stopped,) = [t for t in study.trials if t.state == TrialState.FAIL]
    assert stopped.user_attrs.get("status") == "interrupted", stopped.user_attrs
    retries = [t for t in study.trials
               if t.state == TrialState.WAITING and t.user_attrs.get("retry_of") == stopped.number]
    assert len(retries) == 1 and retries[0].system_attrs["fixed_params"] == stopped.params, states


def model_backend() -> ModelBackend:
    return ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1)


def test_ctrl_c_while_the_sampler_proposes_fails_the_trial_and_queues_its_setting(tmp_path, monkeypatch):
    config = load_study(make_model_study(tmp_path, n_trials=None))
    real, sent = workers.ask, []

    def ask(study, distributions=None):
        trial = real(study, distributions)
        if not study.study_name.endswith(".baseline") and not sent:
            sent.append(trial.number)
            os.kill(os.getpid(), signal.SIGINT)  # handled at once, in this (the main) thread: held
        return trial

    monkeypatch.setattr(workers, "ask", ask)
    with pytest.raises(KeyboardInterrupt), stop_on_signals():
        run_study(config, config.storage, model_backend(), n_trials=2)
    assert sent
    stopped_trial_is_queued(config)


@pytest.mark.parametrize("point", ["asked", "claimed", "launching"])
def test_ctrl_c_before_the_launch_fails_the_trial_and_queues_its_setting(tmp_path, monkeypatch, point):
    config = load_study(make_model_study(tmp_path, n_trials=None))

    def at(name: str) -> None:
        if name == point:
            raise KeyboardInterrupt

    monkeypatch.setattr(trial_module, "kill_point", at)
    with pytest.raises(KeyboardInterrupt):
        run_study(config, config.storage, model_backend(), n_trials=2)
    stopped_trial_is_queued(config)
