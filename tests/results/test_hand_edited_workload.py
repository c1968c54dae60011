"""A study's stored workload (``tuner_workload``, as tuner.bench.workload.workload_stats writes it)
edited by hand (sqlite3 on the study's file) or written by another tool: status, export and report
refuse in one line naming the attribute and what is wrong, never a traceback
(tuner/engine/study.py, stored_attrs_problem). QA, qa182: each edit here ended all three in
AttributeError or ValueError."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from support.cli_in_process import tuner_here
from support.model_study import make_model_study
from support.prepared_once import prepared_once

#: (the JSON path edited, its JSON text, what the line says)
EDITS = [
    ("$", '"x"', "stored tuner_workload 'x' is not a mapping"),
    ("$.prompt_chars", '{"p50": "x"}', "stored tuner_workload prompt_chars {'p50': 'x'} is not {p50, p90, p99, max}"),
    ("$.output_tokens", "5", "stored tuner_workload output_tokens 5 is not {p50, p90, p99, max}"),
    ("$.prompt_tokens_est", '{"max": 1e300}', "stored tuner_workload prompt_tokens_est {'max': 1e+300} is not"),
    ("$.categories", "[1, 2]", "stored tuner_workload categories [1, 2] is not a mapping of names to counts"),
    ("$.temperature", '"x"', "stored tuner_workload temperature 'x' is not a number of at least 0"),
    ("$.requests", '"many"', "stored tuner_workload requests 'many' is not a whole number"),
    ("$.source", '"x"', "stored tuner_workload source 'x' is not a mapping"),
]


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    return prepared_once(tmp_path_factory, "workload", lambda folder: make_model_study(folder, "wl", n_trials=3)) \
        / "wl.yaml"


@pytest.mark.parametrize("where, value, why", EDITS, ids=[f"{e[0]}={e[1]}" for e in EDITS])
def test_every_reader_refuses_an_edited_workload_in_one_line(measured, tmp_path, where, value, why):
    for f in ("wl.yaml", "wl.db"):
        shutil.copy(measured.parent / f, tmp_path / f)
    con = sqlite3.connect(tmp_path / "wl.db")
    try:
        changed = con.execute("UPDATE study_user_attributes SET value_json = json_set(value_json, ?, json(?)) "
                              "WHERE key = 'tuner_workload'", (where, value)).rowcount
        con.commit()
    finally:
        con.close()
    assert changed == 1
    path = str(tmp_path / "wl.yaml")
    for args in (["status"], ["status", "-f", "json"], ["pareto"], ["export", "--pick", "knee"],
                 ["report", "-o", str(tmp_path / "r.html")]):
        r = tuner_here("study", args[0], path, *args[1:])
        assert r.exit_code == 2 and isinstance(r.exception, SystemExit), (args, repr(r.exception), r.output)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and why in lines[0] and "tuner study delete wl" in lines[0], (args, r.stderr)
    assert not (tmp_path / "r.html").exists()


def test_the_workload_the_tuner_writes_passes(measured):
    r = tuner_here("study", "status", str(measured))
    assert r.exit_code == 0 and "workload: suite quick" in r.output, r.output
