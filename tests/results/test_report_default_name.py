"""``tuner study report`` without ``-o`` writes ``NAME-report.html`` in the working folder, and only
there: a study named by another tool or Optuna itself with a ``/`` in its name, or a name too long
for one file, is refused in one line asking for ``-o``, nothing written (QA: ``--study ../up`` wrote
``../up-report.html`` into the parent folder; tuner/cli/study_report.py, default_output)."""

from __future__ import annotations

import sqlite3

import pytest
from support.cli_in_process import tuner_here
from support.model_study import make_model_study
from support.prepared_once import prepared_once


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    return prepared_once(tmp_path_factory, "named", lambda folder: make_model_study(folder, "nm", n_trials=4)) \
        / "nm.db"


def _renamed(db, tmp_path, name):
    """A copy of the study's storage in ``tmp_path``, the study (and its baseline) renamed ``name``."""
    copy = tmp_path / "store" / "nm.db"
    copy.parent.mkdir()
    copy.write_bytes(db.read_bytes())
    con = sqlite3.connect(copy)
    try:
        with con:
            con.execute("UPDATE studies SET study_name = ? WHERE study_name = 'nm'", (name,))
            con.execute("UPDATE studies SET study_name = ? WHERE study_name = 'nm.baseline'", (name + ".baseline",))
    finally:
        con.close()
    return f"sqlite:///{copy}"


# a control character: the file would not be named as the report line says it (QA, qa177: "report:
# a\x0ab-report.html" of a file named a, newline, b-report.html)
@pytest.mark.parametrize("name", ["../up", "a/b", "z" * 300, "a\nb", "t\x1b[31m", "x\u202ey"])
def test_a_name_that_is_no_file_name_asks_for_o(measured, tmp_path, name):
    url = _renamed(measured, tmp_path, name)
    here = tmp_path / "here"
    here.mkdir()
    (here / "a").mkdir()
    before = sorted(p.name for p in tmp_path.rglob("*"))
    r = tuner_here("study", "report", "--storage", url, "--study", name, cwd=here)
    assert r.exit_code == 2, r.output
    assert r.stderr.count("\n") == 1 and "-o FILE.html" in r.stderr, r.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == before  # nothing written, here or above


def test_a_name_with_spaces_and_emoji_is_still_the_default_file(measured, tmp_path):
    name = "it's a 😀 study"
    url = _renamed(measured, tmp_path, name)
    r = tuner_here("study", "report", "--storage", url, "--study", name, cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert (tmp_path / f"{name}-report.html").stat().st_size > 0
