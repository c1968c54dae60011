"""A SIGTERM that lands after the baseline's trial is asked and before the ``try`` that fails it on
the way out (``tuner.engine.baseline.ensure_baseline``): held while the trial names its worker and
raised as ``start_trial`` returns, or landing in the claim. The baseline trial was left RUNNING by a
clean stop, for the next run's reaper (QA, qa185: 3 of 40 runs with SIGTERM fuzzed over a
``server.backend: model`` run). Now the runner fails this worker's RUNNING baseline trial before the
interrupt goes on, and the next run measures the baseline.

The signal is a real SIGTERM to this process, sent from the named step, so the tuner's own handler
raises there."""

from __future__ import annotations

import os
import signal

import optuna
import pytest
import yaml
from optuna.trial import TrialState

from support.cli_in_process import tuner_here
from support.model_study import model_study_data
from tuner.engine import baseline as baseline_module
from tuner.engine import workers as workers_module


@pytest.mark.parametrize("module, step", [(workers_module, "propose"),  # held, raised as start_trial returns
                                          (baseline_module, "try_claim")])  # after start_trial, before the try
def test_sigterm_between_the_baseline_ask_and_its_try_leaves_nothing_running(tmp_path, monkeypatch, module, step):
    data = model_study_data("early", seed=1)
    (tmp_path / "early.yaml").write_text(yaml.safe_dump(data))
    real = getattr(module, step)
    sent = []

    def signalled(*args, **kwargs):
        if not sent:
            sent.append(step)
            os.kill(os.getpid(), signal.SIGTERM)  # the tuner's handler raises here (or when the hold ends)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, step, signalled)
    run = tuner_here("study", "run", "early.yaml", cwd=tmp_path)
    assert sent == [step]
    assert run.exit_code == 143, run.output
    assert "Traceback" not in run.output, run.output

    url = f"sqlite:///{tmp_path / 'early.db'}"
    storage = optuna.storages.RDBStorage(url)
    baseline = optuna.load_study(study_name="early.baseline", storage=storage).get_trials(deepcopy=False)
    storage.remove_session()
    assert [t.state for t in baseline] == [TrialState.FAIL], [(t.number, t.state) for t in baseline]

    monkeypatch.setattr(module, step, real)
    again = tuner_here("study", "run", "early.yaml", cwd=tmp_path)  # resumable: measures the baseline
    assert again.exit_code == 0, again.output
    assert "2 measured" in again.output, again.output
