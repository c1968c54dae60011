"""Stored text that reaches the report and compare pages -- a study's name (Optuna takes any), a
dataset's category, a failure class edited by hand -- is shown as ``tuner study status`` prints it
(tuner.config.names.shown), then HTML-escaped: a U+202E written raw reverses the rest of its cell in
the browser, and a lone surrogate, which JSON stores, no UTF-8 page can hold.

QA, qa177: ``failure_class: "oom\\ud800"`` ended ``tuner study report`` in UnicodeEncodeError's
traceback with no page; a dataset row's ``category: "code\\u202eedoc"`` and a study named with a
U+202E reached the page raw, where status prints ``code\\u202eedoc``.
"""

import json
import sqlite3

import pytest

from support.model_study import make_model_study
from tuner.config.study import load_study
from tuner.engine.study import WORKLOAD_ATTR, open_study
from tuner.results.compare import compare_studies
from tuner.results.compare_report import write_compare_page
from tuner.results.report import write_report

NAME = "odd\u202eeman"  # what a browser showed as "oddname" reversed: "odd" + "name" backwards


@pytest.fixture(scope="module")
def storage(tmp_path_factory):
    """A measured study, renamed to NAME, its first trial a failure of class ``oom\\ud800``, its
    workload's categories holding a U+202E: edited in SQLite as a user (or another tool) would."""
    config = load_study(make_model_study(tmp_path_factory.mktemp("hidden"), "plain", n_trials=2))
    db = sqlite3.connect(config.storage.removeprefix("sqlite:///"))
    with db:
        (study_id,) = db.execute("SELECT study_id FROM studies WHERE study_name = 'plain'").fetchone()
        (trial_id,) = db.execute("SELECT trial_id FROM trials WHERE study_id = ? AND number = 0",
                                 (study_id,)).fetchone()
        for key, value in (("status", "failed"), ("failure_class", "oom\ud800")):
            db.execute("DELETE FROM trial_user_attributes WHERE trial_id = ? AND key = ?", (trial_id, key))
            db.execute("INSERT INTO trial_user_attributes (trial_id, key, value_json) VALUES (?, ?, ?)",
                       (trial_id, key, json.dumps(value)))
        (workload,) = db.execute("SELECT value_json FROM study_user_attributes WHERE study_id = ? AND key = ?",
                                 (study_id, WORKLOAD_ATTR)).fetchone()
        workload = {**json.loads(workload), "categories": {"code\u202eedoc": 3}}
        db.execute("UPDATE study_user_attributes SET value_json = ? WHERE study_id = ? AND key = ?",
                   (json.dumps(workload), study_id, WORKLOAD_ATTR))
        db.execute("UPDATE studies SET study_name = ? || substr(study_name, 6) WHERE study_name LIKE 'plain%'",
                   (NAME,))
    db.close()
    return config.storage


def _hidden(page: str) -> list[str]:
    return [c for c in ("\u202e", "\ud800") if c in page]


def test_the_report_shows_hidden_characters_escaped(storage, tmp_path):
    page = write_report(open_study(NAME, storage), tmp_path / "r.html").html.read_text(encoding="utf-8")
    assert _hidden(page) == []
    assert "<h1>Study odd\\u202eeman</h1>" in page
    assert "<td>oom\\ud800</td>" in page  # the failure classes' table
    assert "code\\u202eedoc: 3" in page  # the workload's categories


def test_the_compare_page_shows_hidden_characters_escaped(storage, tmp_path):
    study = open_study(NAME, storage)
    page = write_compare_page(compare_studies(study, study), tmp_path / "c.html").read_text(encoding="utf-8")
    assert _hidden(page) == []
    assert "<h1>odd\\u202eeman (A) and odd\\u202eeman (B)</h1>" in page
    assert "<td>study</td><td>odd\\u202eeman</td>" in page


def test_a_confirmation_run_id_is_shown_escaped():
    # the run id of a confirmation as stored (any text, edited or another tool's): "Run ...: 2 rounds"
    from types import SimpleNamespace

    from tuner.results.confirmed import Confirmation
    from tuner.results.report import _table
    from tuner.results.report_traffic import _confirmation_html

    conf = Confirmation("r\u202e<b>1</b>", None, 2, ["single_speedup"], [], {}, 0, {}, {}, [])
    page = "".join(_confirmation_html(SimpleNamespace(confirmation=conf), _table))
    assert _hidden(page) == [] and "Run r\\u202e&lt;b&gt;1&lt;/b&gt;: 2 rounds" in page, page
