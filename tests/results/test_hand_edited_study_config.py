"""A study's stored config (``tuner_config``) whose ``slo``, ``server.model`` or ``server.sim`` was
edited by hand (sqlite3 on the study's file) or written by another tool: status, export and report
refuse in one line naming the key and what is wrong, never a traceback (tuner/engine/study.py,
stored_attrs_problem). QA, qa182: ``slo: "x"`` ended status and report in TypeError, an entry without
limits in KeyError 'limits', ``server.model: "x"`` or a noise of "x" or null the report in
AttributeError, ValueError or TypeError."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from support.cli_in_process import tuner_here
from support.model_study import make_model_study, one_launch_study
from support.prepared_once import prepared_once

#: (the JSON path edited, its JSON text, what the line says)
EDITS = [
    ("$.slo", '"x"', "stored tuner_config slo 'x' is not a list"),
    ("$.slo", '[{"concurrency": 1}]', "stored tuner_config slo[0] {'concurrency': 1} is not {concurrency, limits"),
    ("$.slo", '[{"concurrency": 1, "limits": {"ttft_p99_ms": "x"}}]', "stored tuner_config slo[0] "),
    ("$.slo", '[{"concurrency": 1, "ttft_p99_ms": 5}]', "stored tuner_config slo[0] "),
    ("$.slo", '[5]', "stored tuner_config slo[0] 5 is not"),
    ("$.server.model", '"x"', "stored tuner_config server.model 'x' is not a mapping"),
    ("$.server.model.noise", '"x"', "stored tuner_config server.model.noise 'x' is not a share from 0 to below 1"),
    ("$.server.model.noise", "null", "stored tuner_config server.model.noise None is not a share"),
    ("$.server.model.noise", "1.5", "stored tuner_config server.model.noise 1.5 is not a share"),
    ("$.server.sim", "[1]", "stored tuner_config server.sim [1] is not a mapping"),
]


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    return prepared_once(tmp_path_factory, "config", _two_studies)


def _two_studies(folder):
    make_model_study(folder, "cf", n_trials=None)
    # the model backend's study (server.model) measured once, as a user's `study init --backend model` one
    (folder / "cm.yaml").write_text(one_launch_study("cm"))
    r = tuner_here("study", "run", str(folder / "cm.yaml"))
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("where, value, why", EDITS, ids=[f"{e[0]}={e[1]}" for e in EDITS])
def test_every_reader_refuses_an_edited_config_in_one_line(measured, tmp_path, where, value, why):
    name = "cf" if "server.sim" in where else "cm"
    for f in (f"{name}.yaml", f"{name}.db"):
        shutil.copy(measured / f, tmp_path / f)
    con = sqlite3.connect(tmp_path / f"{name}.db")
    try:
        changed = con.execute("UPDATE study_user_attributes SET value_json = json_set(value_json, ?, json(?)) "
                              "WHERE key = 'tuner_config'", (where, value)).rowcount
        con.commit()
    finally:
        con.close()
    assert changed == 1
    path = str(tmp_path / f"{name}.yaml")
    for args in (["status"], ["export", "--pick", "knee"], ["report", "-o", str(tmp_path / "r.html")]):
        r = tuner_here("study", args[0], path, *args[1:])
        assert r.exit_code == 2 and isinstance(r.exception, SystemExit), (args, repr(r.exception), r.output)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and why in lines[0] and f"tuner study delete {name}" in lines[0], (args, r.stderr)
    assert not (tmp_path / "r.html").exists()


def test_what_the_tuner_writes_passes(measured):
    """Unedited: a model study (server.model with its noise) and a simulator one (server.sim), with an
    slo as the config stores it, read as they are."""
    for name in ("cm", "cf"):
        r = tuner_here("study", "status", str(measured / f"{name}.yaml"))
        assert r.exit_code == 0, r.output
    from tuner.engine.study import _slo_problem
    assert _slo_problem([{"concurrency": 32, "limits": {"ttft_p99_ms": 2000.0, "itl_p99_ms": 60}}]) is None
