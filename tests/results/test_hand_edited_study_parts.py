"""The parts of a study's stored config, space, suite and attention decision the readers take apart,
edited by hand (sqlite3 on the study's file) or written by another tool: status, export, report and
compare refuse in one line naming the attribute, the part and what is wrong, never a traceback
(tuner/engine/study.py, stored_attrs_problem). QA, qa182: ``server.args: "x"``, ``params: "x"``,
``prompts: [5]`` or ``single: 5`` ended compare in AttributeError or TypeError, ``sweep: "x"`` and
``tuner_attention: "x"`` export in AttributeError, the decision's ``trees: "x"`` in KeyError."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from support.cli_in_process import tuner_here
from support.model_study import one_launch_study
from support.prepared_once import prepared_once

#: (the attribute, the JSON path edited, its JSON text, what the line says)
EDITS = [
    ("tuner_config", "$.server.args", '"x"', "stored tuner_config server.args 'x' is not a mapping"),
    ("tuner_config", "$.server.env", "[1]", "stored tuner_config server.env [1] is not a mapping"),
    ("tuner_config", "$.server.extra_args", "5", "stored tuner_config server.extra_args 5 is not a list"),
    ("tuner_space", "$.params", '"x"', "stored tuner_space params 'x' is not a mapping"),
    ("tuner_space", "$.fixed", '"x"', "stored tuner_space fixed 'x' is not a mapping"),
    ("tuner_suite", "$.prompts", '"x"', "stored tuner_suite prompts 'x' is not a list"),
    ("tuner_suite", "$.prompts", "[5]", "stored tuner_suite prompts[0] 5 is not a mapping"),
    ("tuner_suite", "$.single", "5", "stored tuner_suite single 5 is not a mapping"),
    ("tuner_suite", "$.sweep", '"x"', "stored tuner_suite sweep 'x' is not a mapping"),
    ("tuner_suite", "$.sweep.concurrencies", '["a"]',
     "stored tuner_suite sweep.concurrencies ['a'] is not a list of whole numbers"),
    ("tuner_attention", "$", '"x"', "stored tuner_attention 'x' is not a mapping"),
    ("tuner_attention", "$.trees", '"x"', "stored tuner_attention trees 'x' is not true or false"),
    ("tuner_attention", "$.backend", "5", "stored tuner_attention backend 5 is not text"),
]


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    return prepared_once(tmp_path_factory, "parts", _two_measured_studies)


def _two_measured_studies(folder):
    for name in ("pa", "pb"):
        (folder / f"{name}.yaml").write_text(one_launch_study(name))
        r = tuner_here("study", "run", str(folder / f"{name}.yaml"))
        assert r.exit_code == 0, r.output


@pytest.mark.parametrize("key, where, value, why", EDITS, ids=[f"{e[0]}{e[1][1:]}={e[2]}" for e in EDITS])
def test_every_reader_refuses_an_edited_part_in_one_line(measured, tmp_path, key, where, value, why):
    for f in ("pa.yaml", "pa.db"):
        shutil.copy(measured / f, tmp_path / f)
    con = sqlite3.connect(tmp_path / "pa.db")
    try:
        changed = con.execute("UPDATE study_user_attributes SET value_json = json_set(value_json, ?, json(?)) "
                              "WHERE key = ?", (where, value, key)).rowcount
        con.commit()
    finally:
        con.close()
    assert changed == 1
    path = str(tmp_path / "pa.yaml")
    for args in (["status"], ["export", "--pick", "knee"], ["report", "-o", str(tmp_path / "r.html")],
                 ["compare", str(measured / "pb.yaml")]):
        r = tuner_here("study", args[0], path, *args[1:])
        assert r.exit_code == 2 and isinstance(r.exception, SystemExit), (args, repr(r.exception), r.output)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and why in lines[0] and "tuner study delete pa" in lines[0], (args, r.stderr)
    assert not (tmp_path / "r.html").exists()


def test_what_the_tuner_writes_passes(measured):
    r = tuner_here("study", "compare", str(measured / "pa.yaml"), str(measured / "pb.yaml"))
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("key, where, value, why", [EDITS[11], EDITS[0]], ids=["trees", "server.args"])
def test_a_run_adds_nothing_to_a_study_no_reader_trusts(measured, tmp_path, key, where, value, why):
    """QA (qa182): with its decision edited to ``trees: "x"`` and its budget raised, ``study run``
    measured two more trials with that decision, whose results every reader then refused."""
    for f in ("pa.yaml", "pa.db"):
        shutil.copy(measured / f, tmp_path / f)
    con = sqlite3.connect(tmp_path / "pa.db")
    try:
        con.execute("UPDATE study_user_attributes SET value_json = json_set(value_json, ?, json(?)) WHERE key = ?",
                    (where, value, key))
        con.commit()
        before = con.execute("SELECT count(*) FROM trials").fetchone()[0]
    finally:
        con.close()
    r = tuner_here("study", "run", str(tmp_path / "pa.yaml"), "--add-trials", "2")
    assert r.exit_code == 2, r.output
    assert why in r.stderr and "no worker can trust this study" in r.stderr, r.stderr
    con = sqlite3.connect(tmp_path / "pa.db")
    try:
        assert con.execute("SELECT count(*) FROM trials").fetchone()[0] == before
    finally:
        con.close()
