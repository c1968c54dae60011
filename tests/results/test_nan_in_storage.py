"""A NaN objective value in a SQLite storage (SQLite keeps it as NULL, which Optuna's reader asserts
on): the readers show that trial as unreadable and every other trial as before (QA: status, pareto,
export and report each ended in Optuna's AssertionError)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.model_study import make_model_study
from support.nan_value import store_nan

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.engine.records import UNREADABLE, load_records
from tuner.engine.study import open_study


@pytest.fixture
def nan_study(tmp_path):
    """A study of 3 launches (and a reuse) whose trial 1 has a NaN first objective value in storage."""
    path = make_model_study(tmp_path, "nan", n_trials=3)
    config = load_study(path)
    store_nan(config, "nan", 1)
    return path, config


def test_the_nan_trial_is_unreadable_and_the_others_stay(nan_study):
    _, config = nan_study
    records = load_records(open_study(config.name, config.storage))
    assert [r.number for r in records] == list(range(len(records))) and len(records) >= 3
    assert records[1].status == UNREADABLE and records[1].values is None and not records[1].feasible
    assert "NaN" in records[1].attrs["failure_class"]
    assert records[1].requested is not None  # the setting it asked for is still shown
    assert all(r.status != UNREADABLE for r in records if r.number != 1)
    assert records[0].values and records[2].values


def test_every_reader_runs_on_it(nan_study, tmp_path):
    path, config = nan_study
    runner = CliRunner()
    listed = runner.invoke(cli, ["study", "list", "--storage", config.storage, "-f", "json"])
    assert listed.exit_code == 0, listed.output
    assert json.loads(listed.output)[0]["counts"]["unreadable"] == 1
    status = runner.invoke(cli, ["study", "status", str(path), "-f", "csv"])
    assert status.exit_code == 0, status.output
    assert "\n1,COMPLETE,unreadable," in status.output
    pareto = runner.invoke(cli, ["study", "pareto", str(path), "-f", "json"])
    assert pareto.exit_code == 0, pareto.output
    picked = runner.invoke(cli, ["study", "export", str(path), "--pick", "1"])
    assert picked.exit_code == 1 and "trial 1" in picked.output and "measured nothing" in picked.output
    page = tmp_path / "r.html"
    report = runner.invoke(cli, ["study", "report", str(path), "-o", str(page)])
    assert report.exit_code == 0, report.output
    assert "not a number (SQLite keeps a NaN as NULL" in page.read_text(encoding="utf-8")


def test_a_nan_baseline_is_no_baseline_and_status_says_why(tmp_path):
    path = make_model_study(tmp_path, "nanb", n_trials=1)
    store_nan(load_study(path), "nanb.baseline", 0)
    status = CliRunner().invoke(cli, ["study", "status", str(path), "-f", "json"])
    assert status.exit_code == 0, status.output
    shown = json.loads(status.output)
    assert shown["baseline"] is None
    assert shown["baseline_problem"].startswith("measured, but unreadable (a stored objective value is not a "
                                                "number")
