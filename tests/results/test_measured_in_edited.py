"""A trial whose stored ``measured_in`` was edited by hand (sqlite3 on the storage file) or written by
another tool: ``export --pick N`` reads the mean of a setting's readings only from the records the
tuner merges itself, never from that attribute (QA: ``measured_in: 5`` ended ``export --pick`` of the
trial in ``TypeError: argument of type 'int' is not iterable``; tuner/results/pareto.py, repeats_mean)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from support.cli_in_process import tuner_here
from support.model_study import make_model_study

from tuner.config.study import load_study
from tuner.engine.records import MEASURED, load_records
from tuner.engine.study import open_study


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """The measured study and one of its measured trials (number, effective setting)."""
    path = make_model_study(tmp_path_factory.mktemp("measured_in"), "mi", n_trials=6)
    records = load_records(open_study("mi", load_study(path).storage))
    picked = next(r for r in records if r.status == MEASURED and r.feasible)
    return path, picked.number, picked.effective.as_dict()


@pytest.mark.parametrize("value", ["5", '"all"', "null"])
def test_export_of_a_trial_whose_measured_in_is_no_list(study, value):
    path, number, effective = study
    con = sqlite3.connect(path.parent / "mi.db")
    try:
        with con:
            (tid,) = con.execute("SELECT trial_id FROM trials JOIN studies USING (study_id) WHERE study_name = 'mi' "
                                 "AND number = ?", (number,)).fetchone()
            con.execute("DELETE FROM trial_user_attributes WHERE trial_id = ? AND key = 'measured_in'", (tid,))
            con.execute("INSERT INTO trial_user_attributes (trial_id, key, value_json) VALUES (?, 'measured_in', ?)",
                        (tid, value))
    finally:
        con.close()
    r = tuner_here("study", "export", str(path), "--pick", str(number), "--format", "json")
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    assert r.exit_code == 0, r.output
    exported = json.loads(r.stdout)
    assert exported["trial"] == number and exported["effective"] == effective
