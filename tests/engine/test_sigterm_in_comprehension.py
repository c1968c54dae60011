"""A SIGTERM that lands while SQLAlchemy builds the row processors of a SELECT it has executed (the
list comprehension of ``sqlalchemy/orm/loading.py``'s ``instances``, its rows not yet read). On
Python 3.11 the comprehension is a function of its own whose closure holds the statement's cursor,
and a frame keeps its function after ``frame.clear()``: the traceback kept the cursor, so SQLite's
read lock, alive, and the worker's ``mark_interrupted`` waited the whole storage patience on its own
lock, then the run ended with exit 75 and the trial RUNNING (QA, qa185: 1 run in about 40 with
SIGTERM fuzzed over a ``server.backend: model`` run).

The signal is a real SIGTERM to this process, sent from a profile hook the moment the main thread
calls SQLAlchemy's ``create_row_processor`` in the first trial's first attribute write, so the
tuner's own handler raises in that very comprehension."""

from __future__ import annotations

import os
import signal
import sys
import threading

import optuna
import yaml
from optuna.trial import TrialState

from support.cli_in_process import tuner_here
from support.model_study import model_study_data
from tuner.engine import trial as trial_module


def test_sigterm_in_a_row_processor_fails_the_trial_without_waiting_on_its_own_lock(tmp_path, monkeypatch):
    data = model_study_data("comp", seed=1)
    data["budget"] = {"n_trials": 3}
    (tmp_path / "comp.yaml").write_text(yaml.safe_dump(data))
    first = tuner_here("study", "run", "comp.yaml", "--n-trials", "1", cwd=tmp_path)  # the baseline too
    assert first.exit_code == 0, first.output

    landed: list = []
    real = trial_module.TrialRunner._run

    def hook(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "create_row_processor" \
                and "sqlalchemy" in frame.f_code.co_filename:
            sys.setprofile(None)
            landed.append(frame.f_back.f_code.co_name)
            os.kill(os.getpid(), signal.SIGTERM)  # the tuner's handler raises here, in the comprehension

    def run_then_arm(self, trial, baseline):
        landed.append(trial.number)
        if threading.current_thread() is threading.main_thread():
            sys.setprofile(hook)  # the trial's first write reads the trial back through the ORM
        return real(self, trial, baseline)

    monkeypatch.setattr(trial_module.TrialRunner, "_run", run_then_arm)
    try:
        # a short patience: without the fix the worker gives up on its own lock after it (exit 75)
        run = tuner_here("study", "run", "comp.yaml", "--n-trials", "1", cwd=tmp_path,
                         env={"TUNER_STORAGE_PATIENCE_S": "4"})
    finally:
        sys.setprofile(None)
    assert len(landed) == 2, landed  # the trial asked, the SIGTERM sent inside SQLAlchemy
    assert run.exit_code == 143, run.output
    assert "does not answer" not in run.output and "Traceback" not in run.output, run.output

    storage = optuna.storages.RDBStorage(f"sqlite:///{tmp_path / 'comp.db'}")
    trials = optuna.load_study(study_name="comp", storage=storage).get_trials(deepcopy=False)
    storage.remove_session()
    hit = trials[landed[0]]
    assert hit.state == TrialState.FAIL and hit.user_attrs.get("status") == "interrupted", (hit.state, hit.user_attrs)
    assert not [t.number for t in trials if t.state == TrialState.RUNNING]
    assert [t for t in trials if t.state == TrialState.WAITING and t.user_attrs.get("retry_of") == hit.number]
