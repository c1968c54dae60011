"""A Ctrl-C that lands while SQLAlchemy runs a SELECT on SQLite (QA: SIGINT or SIGHUP 1.5-2.5 s
into a run on ``server.backend: model``, about 1 run in 10 under load). SQLAlchemy invalidates the
connection, but the statement's cursor, still referenced from the interrupted frames, keeps it
alive with its read lock; the worker's own write that fails the trial and queues its setting waited
for that lock for the whole storage patience, then the run ended with exit 75 and the trial RUNNING.

The signal here is a real SIGINT to this process, sent the moment the worker's first SELECT after
the trial's ask has been executed (SQLAlchemy's ``after_cursor_execute``), so the tuner's own
handler raises in that very window."""

from __future__ import annotations

import os
import signal
import threading

import optuna
import pytest
import yaml
from optuna.trial import TrialState
from sqlalchemy import event
from sqlalchemy.engine import Engine

from support.cli_in_process import tuner_here
from support.model_study import model_study_data
from tuner.engine import trial as trial_module


@pytest.mark.parametrize("where", ["_resolve", "measure"])  # before the launch; while it measures
def test_ctrl_c_mid_select_fails_the_trial_and_queues_it_without_waiting_on_its_own_lock(tmp_path, monkeypatch,
                                                                                        where):
    data = model_study_data("mid", seed=1)
    data["budget"] = {"n_trials": 4}
    (tmp_path / "mid.yaml").write_text(yaml.safe_dump(data))
    first = tuner_here("study", "run", "mid.yaml", "--n-trials", "1", cwd=tmp_path)
    assert first.exit_code == 0, first.output

    armed = []
    real = getattr(trial_module.TrialRunner, where)

    def resolve_then_arm(self, *args, **kwargs):
        trial = kwargs.get("trial") or next(a for a in args if hasattr(a, "_trial_id"))
        armed.append(trial.number)  # the next SELECT of the main thread gets the Ctrl-C
        return real(self, *args, **kwargs)

    def ctrl_c(conn, cursor, statement, parameters, context, executemany):
        if armed and armed[-1] is not None and threading.current_thread() is threading.main_thread() \
                and statement.lstrip().upper().startswith("SELECT"):
            armed.append(None)
            os.kill(os.getpid(), signal.SIGINT)  # the tuner's handler raises here, mid-statement

    monkeypatch.setattr(trial_module.TrialRunner, where, resolve_then_arm)
    event.listen(Engine, "after_cursor_execute", ctrl_c)
    try:
        # a short patience: without the fix the worker gives up on its own lock after it (exit 75)
        run = tuner_here("study", "run", "mid.yaml", "--n-trials", "1", cwd=tmp_path,
                         env={"TUNER_STORAGE_PATIENCE_S": "4"})
    finally:
        event.remove(Engine, "after_cursor_execute", ctrl_c)
    assert armed[-1] is None, armed  # the Ctrl-C was sent mid-statement
    assert run.exit_code == 130, run.output
    assert "does not answer" not in run.output and "Traceback" not in run.output, run.output

    storage = optuna.storages.RDBStorage(f"sqlite:///{tmp_path / 'mid.db'}")
    trials = optuna.load_study(study_name="mid", storage=storage).get_trials(deepcopy=False)
    storage.remove_session()
    hit = trials[armed[0]]
    assert hit.state == TrialState.FAIL and hit.user_attrs.get("status") == "interrupted", (hit.state, hit.user_attrs)
    assert not [t.number for t in trials if t.state == TrialState.RUNNING]
    queued = [t for t in trials if t.state == TrialState.WAITING and t.number > hit.number]
    # its setting queued again (the seeds not yet reached wait too)
    assert [t.system_attrs.get("fixed_params") for t in queued].count(hit.params) == 1, [t.system_attrs for t in queued]
