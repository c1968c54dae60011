"""A reader during a run reads a trial in several SELECTs (Optuna loads a trial's state, then its
values, attributes and params each with a query of its own: ``selectinload``). On PostgreSQL (read
committed: every statement its own snapshot) a tell that commits between them is seen half: the
trial's state from before it (RUNNING) and its values from after. QA: `tuner study status -f json`
polled during two PostgreSQL workers showed trials 64 and 65 as RUNNING with values
([1.686, 1.001], [1.611, 0.998]). The test stores that very read -- a RUNNING trial with
values rows -- in a real SQLite study and runs the real commands."""

import csv
import io
import json
import sqlite3
from contextlib import closing

import optuna
from click.testing import CliRunner
from support.model_study import make_model_study

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.engine.urls import sqlite_path


def _running_with_values(tmp_path):
    path = make_model_study(tmp_path, "told", n_trials=3)
    config = load_study(path)
    study = optuna.load_study(study_name=config.name, storage=config.storage)
    done = next(t for t in study.get_trials() if t.user_attrs.get("status") == "measured")
    trial = study.ask()  # RUNNING, as a worker's trial is until its tell commits
    for key, value in done.user_attrs.items():  # the figures and status a worker writes before its tell
        study._storage.set_trial_user_attr(trial._trial_id, key, value)
    # the tell's values, seen before its state (closed: Python 3.13 warns of a connection left open)
    with closing(sqlite3.connect(sqlite_path(config.storage))) as db, db:
        for objective, value in enumerate(done.values):
            db.execute("INSERT INTO trial_values (trial_id, objective, value, value_type) VALUES (?, ?, ?, 'FINITE')",
                       (trial._trial_id, objective, value))
    assert study._storage.get_trial(trial._trial_id).state.name == "RUNNING"
    assert study._storage.get_trial(trial._trial_id).values == done.values
    return path, trial.number


def test_status_shows_no_values_for_a_trial_still_running(tmp_path):
    path, number = _running_with_values(tmp_path)
    result = CliRunner().invoke(cli, ["study", "status", str(path), "-f", "json"])
    assert result.exit_code == 0, result.output
    row = next(t for t in json.loads(result.stdout)["trials"] if t["number"] == number)
    assert row["state"] == "RUNNING" and row["status"] is None
    assert row["values"] is None, row
    assert number not in json.loads(result.stdout)["front"]

    result = CliRunner().invoke(cli, ["study", "status", str(path), "-f", "csv"])
    assert result.exit_code == 0, result.output
    row = next(r for r in csv.DictReader(io.StringIO(result.stdout)) if r["trial"] == str(number))
    assert row["single_speedup"] == "" and row["speedup@32"] == "", row

    result = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", str(number)])
    assert result.exit_code != 0 and "running" in result.stderr
