"""A Ctrl-C that lands while SQLAlchemy runs a SELECT on SQLite during the baseline's measurement: the
worker fails the baseline trial (the next run measures it again) and exits 130 at once, never waiting
on the read lock its own interrupted statement left (``tuner/engine/interrupted.py``; QA, qa127 found
it for trials and named the baseline's path as the same window)."""

from __future__ import annotations

import os
import signal
import threading

import optuna
import yaml
from optuna.trial import TrialState
from sqlalchemy import event
from sqlalchemy.engine import Engine
from support.cli_in_process import tuner_here
from support.model_study import model_study_data

from tuner.engine import trial as trial_module


def test_ctrl_c_mid_select_of_the_baseline_fails_it_without_waiting_on_its_own_lock(tmp_path, monkeypatch):
    data = model_study_data("base", seed=1)
    data["budget"] = {"n_trials": 2}
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(data))

    armed = []
    real = trial_module.TrialRunner.measure

    def measure_then_arm(self, spec, label, trial, *args, **kwargs):
        if spec is None:  # the baseline's measurement: the next SELECT of the main thread gets the Ctrl-C
            armed.append(trial.number)
        return real(self, spec, label, trial, *args, **kwargs)

    def ctrl_c(conn, cursor, statement, parameters, context, executemany):
        if armed and armed[-1] is not None and threading.current_thread() is threading.main_thread() \
                and statement.lstrip().upper().startswith("SELECT"):
            armed.append(None)
            os.kill(os.getpid(), signal.SIGINT)  # the tuner's handler raises here, mid-statement

    monkeypatch.setattr(trial_module.TrialRunner, "measure", measure_then_arm)
    event.listen(Engine, "after_cursor_execute", ctrl_c)
    try:
        # a short patience: a worker waiting on its own lock gives up after it (exit 75)
        run = tuner_here("study", "run", "base.yaml", cwd=tmp_path, env={"TUNER_STORAGE_PATIENCE_S": "4"})
    finally:
        event.remove(Engine, "after_cursor_execute", ctrl_c)
    assert armed and armed[-1] is None, armed  # the Ctrl-C was sent mid-statement
    assert run.exit_code == 130, run.output
    assert "does not answer" not in run.output and "Traceback" not in run.output, run.output

    storage = optuna.storages.RDBStorage(f"sqlite:///{tmp_path / 'base.db'}")
    names = [s.study_name for s in optuna.get_all_study_summaries(storage)]
    baseline = optuna.load_study(study_name=next(n for n in names if n != "base"), storage=storage)
    trials = baseline.get_trials(deepcopy=False)
    storage.remove_session()
    assert trials and not [t.number for t in trials if t.state == TrialState.RUNNING], [t.state for t in trials]
