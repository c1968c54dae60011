"""A reused trial whose ``reused_from`` was edited by hand (sqlite3 on the storage file) or written by
another tool as something other than a trial number: ``pareto`` and ``export`` read the study as
before, the reused trial standing for itself (QA: ``"abc"`` ended both in ``ValueError: invalid
literal for int()``, a traceback, and ``export --pick`` of a reused trial whose ``reused_from`` read
2.5 exported trial 2's setting; tuner/results/pareto.py, reused_from)."""

from __future__ import annotations

import json
import sqlite3

import pytest
from support.cli_in_process import tuner_here
from support.model_study import make_model_study

from tuner.config.study import load_study
from tuner.engine.records import REUSED, load_records
from tuner.engine.study import open_study


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    """The measured study (its seeds make one trial reuse another), its reused trial's number and
    effective setting."""
    path = make_model_study(tmp_path_factory.mktemp("reused"), "ru", n_trials=6)
    records = load_records(open_study("ru", load_study(path).storage))
    (reused,) = [r for r in records if r.status == REUSED]
    return path, reused.number, reused.effective.as_dict()


@pytest.mark.parametrize("value", ['"abc"', "2.5", "NaN", "[0]", "true"])
def test_pareto_and_export_read_a_reused_trial_that_names_no_trial(study, value):
    path, number, effective = study
    con = sqlite3.connect(path.parent / "ru.db")
    try:
        with con:
            changed = con.execute(
                "UPDATE trial_user_attributes SET value_json = ? WHERE key = 'reused_from' AND trial_id = "
                "(SELECT trial_id FROM trials JOIN studies USING (study_id) WHERE study_name = 'ru' "
                "AND number = ?)", (value, number)).rowcount
    finally:
        con.close()
    assert changed == 1
    pareto = tuner_here("study", "pareto", str(path), "-f", "json")
    assert pareto.exception is None or isinstance(pareto.exception, SystemExit), pareto.exception
    assert pareto.exit_code == 0, pareto.output
    for pick in ("knee", str(number)):
        exported = tuner_here("study", "export", str(path), "--pick", pick, "--format", "json")
        assert exported.exception is None or isinstance(exported.exception, SystemExit), exported.exception
        assert exported.exit_code == 0, exported.output
        if pick == str(number):  # never another trial's setting (2.5 and true read as trials 2 and 1)
            assert json.loads(exported.stdout)["effective"] == effective
