"""Trials whose stored attributes were edited by hand (QA: with sqlite3) or written by a tool that
does not know them: every reader shows them as ``unreadable`` with why, keeps them off the front and
out of the picks, and none ends in a traceback (tuner/engine/records.py, attrs_problem)."""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import contextmanager

import pytest
from click.testing import CliRunner
from support.model_study import make_model_study
from support.prepared_once import prepared_once

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.engine.records import UNREADABLE, attrs_problem, load_records
from tuner.engine.study import open_study


@contextmanager
def _edited(measured, tmp_path):
    """A copy of the measured study (``ed.yaml``, ``ed.db``) in ``tmp_path``, its database open for
    hand edits, committed on leaving."""
    for f in ("ed.yaml", "ed.db"):
        shutil.copy(measured.parent / f, tmp_path / f)
    con = sqlite3.connect(tmp_path / "ed.db")
    try:
        yield con
        con.commit()
    finally:
        con.close()

@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    return prepared_once(tmp_path_factory, "edited", lambda folder: make_model_study(folder, "ed", n_trials=6)) / "ed.yaml"


#: (attribute, the trial's number, its new JSON text; None deletes it)
EDITS = [
    ("effective", 3, '"garbage"'),
    ("effective", 3, '{"num_steps": 5}'),
    ("effective", 2, '{"num_steps": 100000, "eagle_topk": -1, "num_draft_tokens": 0}'),
    ("status", 0, "5"),
    ("model_duration_s", 3, '"long"'),
    ("speedup@32", 3, '"fast"'),
    ("accept_length", 0, '"x"'),
    ("single_tok_per_s", 3, "NaN"),
    ("tok_per_s@8", 3, "-5.0"),
    ("speedup@32", 0, "-0.5"),
]

READERS = [["status"], ["status", "-f", "json"], ["pareto"], ["pareto", "-f", "csv"], ["export", "--pick", "single"],
           ["export", "--pick", "knee"], ["export", "--pick", "throughput"], ["export", "--adaptive"]]


@pytest.mark.parametrize("key, number, value", EDITS, ids=[f"{k}={v}" for k, _, v in EDITS])
def test_every_reader_survives_an_edited_trial(measured, tmp_path, key, number, value):
    path = tmp_path / "ed.yaml"
    with _edited(measured, tmp_path) as con:
        (tid,) = con.execute("SELECT trial_id FROM trials JOIN studies USING (study_id) WHERE study_name = 'ed' "
                             "AND number = ?", (number,)).fetchone()
        changed = con.execute("UPDATE trial_user_attributes SET value_json = ? WHERE trial_id = ? AND key = ?",
                              (value, tid, key)).rowcount
    assert changed == 1
    record = load_records(open_study("ed", load_study(path).storage))[number]
    assert record.status == UNREADABLE and not record.feasible and record.effective is None
    assert key in record.failure_class
    for args in READERS:
        r = CliRunner().invoke(cli, ["study", *args[:1], str(path), *args[1:]])
        assert r.exception is None or isinstance(r.exception, SystemExit), (args, r.exception)
        assert r.exit_code in (0, 1), (args, r.output)
        if args[0] == "export" and r.exit_code == 0 and "--adaptive" not in args:
            assert f"-> trial {number}\n" not in r.output  # never the edited trial


def test_what_passes_is_what_the_readers_compute_with():
    good = {"status": "measured", "effective": {"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4},
            "requested": {"num_steps": 3, "eagle_topk": None, "num_draft_tokens": None},
            "single_tok_per_s": 61.3, "tok_per_s@32": 719.2, "speedup@32": 0.94, "stages": []}
    assert attrs_problem(good) is None
    assert attrs_problem({**good, "tok_per_s@32": True}) == "tok_per_s@32 True is not a finite number"
    assert attrs_problem({**good, "stages": "oops"}) == "stages 'oops' is not a list"
    assert "is not a setting SGLang runs" in attrs_problem({**good, "effective": {**good["effective"], "eagle_topk": None}})


def _baseline_edited(measured, tmp_path, value_json: str):
    """A copy of the measured study whose baseline's single_tok_per_s reads ``value_json``."""
    with _edited(measured, tmp_path) as con:
        changed = con.execute("UPDATE trial_user_attributes SET value_json = ? WHERE key = 'single_tok_per_s' AND "
                              "trial_id IN (SELECT trial_id FROM trials JOIN studies USING (study_id) "
                              "WHERE study_name = 'ed.baseline')", (value_json,)).rowcount
    assert changed >= 1
    return tmp_path / "ed.yaml"


def test_status_says_why_a_measured_baseline_is_unreadable(measured, tmp_path):
    """An edited baseline was shown as "not measured yet" (a user would wait for a measurement that
    was made); status names the problem and the way out."""
    path = _baseline_edited(measured, tmp_path, "NaN")
    r = CliRunner().invoke(cli, ["study", "status", str(path)])
    assert r.exit_code == 0, r.output
    assert ("baseline: measured, but unreadable (single_tok_per_s nan is not a finite number); the next tuner "
            "study run measures it again") in r.output, r.output
    assert "not measured yet" not in r.output


def test_a_storage_that_fails_mid_command_is_one_line_not_a_traceback(measured, tmp_path, monkeypatch):
    """QA: PostgreSQL stopped a second into `export`/`status`/`report`/`list` ended each in
    SQLAlchemy's traceback. Here the SQLite storage opens, then a table the reader needs is gone.
    The line names this command's storage only: an earlier command in the same process (a test
    worker, a script using click's runner) opened another (qa71: the line named a PostgreSQL URL
    an earlier test had opened, and this test failed by test order)."""
    from tuner.engine import storage

    monkeypatch.setattr(storage, "OPENED", ["postgresql://tuner:s3cret@127.0.0.1:5/earlier"])
    with _edited(measured, tmp_path) as con:
        con.execute("ALTER TABLE trial_user_attributes RENAME COLUMN value_json TO v")  # create_all cannot mend it
    r = CliRunner().invoke(cli, ["study", "status", str(tmp_path / "ed.yaml")])
    assert r.exit_code == 2, (r.exit_code, r.output)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: storage sqlite:///") and "failed during the command" in lines[0]
    assert "OperationalError" in lines[0] and "Traceback" not in r.output
    assert "earlier" not in lines[0] and "s3cret" not in r.output, lines[0]


def test_a_storage_failure_line_never_holds_the_password():
    import sqlalchemy.exc

    from tuner.engine import storage

    url = "postgresql://tuner:p%40ss%2Fw0rd@127.0.0.1:5/db"
    storage.OPENED.append(url)
    try:
        exc = sqlalchemy.exc.OperationalError("SELECT 1", {}, Exception(
            f"connection to {url} failed for password p@ss/w0rd and p%40ss%2Fw0rd"))
        line = storage.storage_failure_line(exc)
    finally:
        storage.OPENED.remove(url)
    assert line and "w0rd" not in line and "postgresql://tuner:***@127.0.0.1:5/db" in line, line
    assert storage.storage_failure_line(ValueError("not a storage error")) is None


def test_status_says_why_the_baseline_launch_failed(tmp_path):
    """QA: after `run` ended with "baseline failed (startup_timeout)", status said "not measured yet"."""
    from support.model_study import SPACE, STUDY

    path = tmp_path / "bf.yaml"
    path.write_text(STUDY.format(name="bf", space=SPACE, args="", profile="k2.6-tp8-pcie", seeds="").replace(
        "  sim: {", '  extra_args: ["--sim-fail-startup", "CUDA error"]\n  sim: {load_seconds: 0.1, '))
    r = CliRunner().invoke(cli, ["study", "run", str(path)])
    assert r.exit_code == 1 and "baseline" in r.output, r.output
    r = CliRunner().invoke(cli, ["study", "status", str(path)])
    assert r.exit_code == 0, r.output
    assert "baseline: its last launch failed (other: server exit code 1 before it was ready" in r.output, r.output
    assert "not measured yet" not in r.output


def test_a_stage_without_its_estimates_is_unreadable_not_a_traceback_in_the_pruner():
    """QA: a measured trial's `stages` edited to [{"stage": "probe"}] passed the check, and the next
    `study run` died in the pruner with KeyError: 'estimates' (its trial interrupted). Each stage
    must be {stage: text, estimates: [finite numbers]}; otherwise the trial is unreadable."""
    good = {"status": "measured", "effective": {"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4},
            "stages": [{"stage": "probe", "estimates": [2.5, 0.9]}]}
    assert attrs_problem(good) is None
    for stages in ([{"stage": "probe"}], [1], [{"estimates": [2.5, 0.9]}],
                   [{"stage": "probe", "estimates": [2.5, "x"]}], [{"stage": "probe", "estimates": 2.5}]):
        assert "stages" in (attrs_problem({**good, "stages": stages}) or ""), stages


@pytest.mark.parametrize("objective, value_type, value", [(0, "INF_POS", None), (1, "INF_NEG", None),
                                                      (0, "FINITE", -1.0)])
def test_a_trial_told_an_infinite_value_is_unreadable_never_the_front(measured, tmp_path, objective, value_type,
                                                                      value):
    """QA: a measured trial whose stored objective value was +inf (``study.tell(t, [inf, ...])``, or
    an edit) stood on the front as "best single_speedup" with value inf, and ``export --pick single``
    wrote it, its header saying 2.24x; -inf was a feasible measured trial. A value that is not a
    finite number, or is below 0 (every objective is a rate or a ratio: a told -1.0 was a feasible
    measurement, on the front whenever its other objective led), makes the trial unreadable, with
    why, as an edited attribute does."""
    path = tmp_path / "ed.yaml"
    with _edited(measured, tmp_path) as con:
        changed = con.execute("UPDATE trial_values SET value = ?, value_type = ? WHERE objective = ? AND trial_id IN "
                              "(SELECT trial_id FROM trials JOIN studies USING (study_id) WHERE study_name = 'ed' "
                              "AND number = 1)", (value, value_type, objective)).rowcount
    assert changed == 1
    record = load_records(open_study("ed", load_study(path).storage))[1]
    assert record.status == UNREADABLE and not record.feasible, record
    name = ["single_speedup", "speedup@32"][objective]
    why = "-1.0 is negative" if value is not None else "inf is not a finite number"
    assert f"value of {name}" in record.failure_class and why in record.failure_class, record.failure_class
    for pick in ("single", "throughput", "knee"):
        r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", pick])
        assert r.exit_code == 0 and "-> trial 1\n" not in r.output, (pick, r.output)
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", "1"])
    assert r.exit_code == 1 and "trial 1" in r.output and why in r.output, r.output
    r = CliRunner().invoke(cli, ["study", "pareto", str(path), "-f", "csv"])
    assert r.exit_code == 0 and "inf" not in r.output and "\n1," not in r.output, r.output


def test_a_baseline_edited_to_a_negative_rate_is_unreadable(measured, tmp_path):
    """QA: a baseline whose single_tok_per_s was edited to -5.0 was shown as "single request -5.0
    tok/s" and export wrote "61.2 vs -5.0 tok/s = -12.24x" in its header."""
    path = _baseline_edited(measured, tmp_path, "-5.0")
    r = CliRunner().invoke(cli, ["study", "status", str(path)])
    assert r.exit_code == 0, r.output
    assert "baseline: measured, but unreadable (single_tok_per_s -5.0 is negative)" in r.output, r.output
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", "knee"])
    assert r.exit_code == 0 and "-5.0" not in r.output and "-12." not in r.output, r.output
    assert "vs n/a tok/s" in r.output, r.output  # no baseline figure to divide by


#: (study attribute, its new JSON text; None deletes it, a dict edits the stored config)
STUDY_EDITS = [
    ("tuner_config", '"garbage"'),
    ("tuner_config", {"server": "model"}),
    ("tuner_config", {"server.backend": 7}),
    ("tuner_suite", None),
    ("tuner_space", "[1, 2]"),
    ("objectives", '["bogus", "speedup@32"]'),
    ("objectives", "[]"),
]


@pytest.mark.parametrize("key, value", STUDY_EDITS, ids=[f"{k}={v}" for k, v in STUDY_EDITS])
def test_a_study_whose_stored_attributes_were_edited_is_one_line_from_every_reader(measured, tmp_path, key, value):
    """QA: a study whose tuner_config was edited into a string ended status, report and list in
    AttributeError's traceback; without its tuner_suite, export in KeyError's; a server.backend of 7,
    report in html.escape's; objectives edited to ["bogus", ...] labelled the figures "bogus". Every
    reader now names the study and the attribute, exit 2, writing nothing; list shows it unreadable."""
    import json

    path = tmp_path / "ed.yaml"
    with _edited(measured, tmp_path) as con:
        (sid,) = con.execute("SELECT study_id FROM studies WHERE study_name = 'ed'").fetchone()
        if value is None:
            changed = con.execute("DELETE FROM study_user_attributes WHERE study_id = ? AND key = ?", (sid, key)).rowcount
        else:
            if isinstance(value, dict):
                (text,) = con.execute("SELECT value_json FROM study_user_attributes WHERE study_id = ? AND key = ?",
                                      (sid, key)).fetchone()
                config = json.loads(text)
                for dotted, new in value.items():
                    *up, last = dotted.split(".")
                    node = config
                    for part in up:
                        node = node[part]
                    node[last] = new
                value = json.dumps(config)
            changed = con.execute("UPDATE study_user_attributes SET value_json = ? WHERE study_id = ? AND key = ?",
                                  (value, sid, key)).rowcount
    assert changed == 1
    out = tmp_path / "out"
    out.mkdir()
    for args in [*READERS, ["report", "-o", str(out / "r.html")], ["report", "-o", str(out / "r.html"), "--png",
                                                                    str(out / "png")], ["compare", str(path)]]:
        r = CliRunner().invoke(cli, ["study", *args[:1], str(path), *args[1:]])
        assert r.exception is None or isinstance(r.exception, SystemExit), (args, r.exception)
        assert r.exit_code == 2, (args, r.output)
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: ") and f"ed: stored {key}" in lines[0], (args, r.output)
    assert list(out.iterdir()) == []
    r = CliRunner().invoke(cli, ["study", "list", "--storage", f"sqlite:///{tmp_path / 'ed.db'}"])
    assert r.exit_code == 0 and "unreadable" in r.output, r.output
