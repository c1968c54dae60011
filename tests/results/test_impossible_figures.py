"""A trial's (or the baseline's) figures edited by hand to ones no server produces: 1e300 tok/s and
objective values (numpy's matmul overflowed in the hypervolume, its chart all null, tables printed
301 digits), a baseline of 0 tok/s (status said "0.0"; every speedup over it is nothing). Each reader
shows such a trial as ``unreadable: <figure, what is wrong>`` and keeps it off the front
(tuner/engine/records.py, attrs_problem and values_problem). QA, qa182."""

from __future__ import annotations

import json
import shutil
import sqlite3
import warnings

import pytest
from support.cli_in_process import tuner_here
from support.model_study import make_model_study
from support.prepared_once import prepared_once

from tuner.engine.records import FIGURE_MAX, attrs_problem, values_problem


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    return prepared_once(tmp_path_factory, "impossible", lambda folder: make_model_study(folder, "im", n_trials=6)) \
        / "im.yaml"


def _copy(measured, tmp_path, *statements):
    for f in ("im.yaml", "im.db"):
        shutil.copy(measured.parent / f, tmp_path / f)
    con = sqlite3.connect(tmp_path / "im.db")
    try:
        for sql in statements:
            con.execute(sql)
        con.commit()
    finally:
        con.close()
    return str(tmp_path / "im.yaml")


def _measured_numbers(path):
    r = tuner_here("study", "status", path, "-f", "json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


IN_TRIALS_0_TO_3 = ("trial_id IN (SELECT trial_id FROM trials JOIN studies USING (study_id) "
                    "WHERE study_name = 'im' AND number BETWEEN 0 AND 3)")


def test_figures_of_1e300_are_unreadable_and_overflow_nothing(measured, tmp_path):
    path = _copy(measured, tmp_path,
                 "UPDATE trial_user_attributes SET value_json = '1e300' WHERE (key LIKE 'tok_per_s@%' "
                 f"OR key = 'single_tok_per_s') AND {IN_TRIALS_0_TO_3}",
                 f"UPDATE trial_values SET value = 1e300 WHERE {IN_TRIALS_0_TO_3}")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        for args in (["status"], ["pareto"], ["pareto", "-f", "csv"], ["export", "--pick", "knee"],
                     ["report", "-o", str(tmp_path / "r.html")]):
            r = tuner_here("study", args[0], path, *args[1:])
            assert r.exit_code == 0 and r.exception is None, (args, r.output)
            assert "0" * 100 not in r.stdout, (args, r.output)
    assert not [w for w in seen if "overflow" in str(w.message)], [str(w.message) for w in seen]
    assert "0" * 100 not in (tmp_path / "r.html").read_text()
    r = tuner_here("study", "status", path, "-f", "json")
    assert r.exit_code == 0 and "is more than any server produces" in r.output, r.output


def test_objective_values_of_1e300_are_unreadable(measured, tmp_path):
    path = _copy(measured, tmp_path, f"UPDATE trial_values SET value = 1e300 WHERE {IN_TRIALS_0_TO_3}")
    r = tuner_here("study", "status", path, "-f", "json")
    assert r.exit_code == 0 and "1e+300 is more than any server produces" in r.output, r.output
    r = tuner_here("study", "pareto", path, "-f", "csv")
    assert r.exit_code == 0 and "e+300" not in r.output and "0" * 100 not in r.output, r.output


def test_a_baseline_of_0_tok_per_s_is_no_baseline(measured, tmp_path):
    path = _copy(measured, tmp_path,
                 "UPDATE trial_user_attributes SET value_json = '0' WHERE key = 'tok_per_s@32' AND trial_id IN "
                 "(SELECT trial_id FROM trials JOIN studies USING (study_id) WHERE study_name = 'im.baseline')")
    r = tuner_here("study", "status", path)
    assert r.exit_code == 0, r.output
    assert "baseline: measured, but unreadable (tok_per_s@32 is 0, which no server that ran produces)" in r.output, \
        r.output
    r = tuner_here("study", "report", path, "-o", str(tmp_path / "r.html"))
    assert r.exit_code == 0, r.output


def test_the_bounds():
    assert attrs_problem({"single_tok_per_s": 0.5, "tok_per_s@32": FIGURE_MAX, "speedup@32": 0.01}) is None
    assert attrs_problem({"single_tok_per_s": 0}) == "single_tok_per_s is 0, which no server that ran produces"
    assert attrs_problem({"speedup@8": 0.0}) == "speedup@8 is 0, which no server that ran produces"
    assert attrs_problem({"tok_per_s@8": 2e9}) == "tok_per_s@8 2000000000.0 is more than any server produces (1e+09)"
    # a duration or an accept length of 0 is no rate; a failed trial's values are 0, the worst
    assert attrs_problem({"duration_s": 0, "accept_length": 0}) is None
    assert values_problem([0.0, 0.0], ["single_speedup", "speedup@32"]) is None
    assert values_problem([1.0, 1e10], ["single_speedup", "speedup@32"]) == \
        "value of speedup@32 10000000000.0 is more than any server produces (1e+09)"


def test_a_figure_of_400_digits_is_unreadable(measured, tmp_path):
    """JSON spells a whole number of any length; one past a float's range is no figure (QA, qa182:
    ``single_tok_per_s`` edited to 10^400 ended every reader in math.isfinite's OverflowError)."""
    path = _copy(measured, tmp_path,
                 f"UPDATE trial_user_attributes SET value_json = '1{'0' * 400}' WHERE key = 'single_tok_per_s' "
                 f"AND {IN_TRIALS_0_TO_3}")
    for args in (["status"], ["pareto"], ["export", "--pick", "knee"], ["report", "-o", str(tmp_path / "r.html")]):
        r = tuner_here("study", args[0], path, *args[1:])
        assert r.exit_code == 0 and r.exception is None, (args, repr(r.exception), r.output)
    r = tuner_here("study", "status", path, "-f", "json")
    assert r.exit_code == 0 and f"single_tok_per_s 1{'0' * 59}... is not a finite number" in r.output, r.output
