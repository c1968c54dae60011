"""`tuner study run` on a study one of whose measured trials holds a figure edited by hand into
something the readers refuse (records.attrs_problem: ``accept_length`` NaN, inf or text). The readers
show that trial as unreadable; the default sampler read it as a reading. QA (qa125): the run ended in
scikit-learn's ``ValueError: Input y contains NaN`` (NaN, inf) or ``TypeError: '<' not supported
between instances of 'str' and 'int'`` (text). tuner/engine/structured.py, ``read_trials``."""

from __future__ import annotations

import json
import shutil
import sqlite3

import pytest
from click.testing import CliRunner
from support.model_study import model_study_yaml
from support.prepared_once import prepared_once

from tuner.cli import cli
from tuner.engine.records import UNREADABLE, load_records
from tuner.engine.study import open_study


def _run(path, *more) -> str:
    result = CliRunner().invoke(cli, ["study", "run", str(path), *more])
    assert result.exit_code == 0 and result.exception is None, result.output
    return result.output


def _four_measured(folder):
    """The study of six launches, its first four run (baseline and trials 0-3), its storage beside
    the file: run once per session (support/prepared_once.py), each case editing a copy of its own."""
    path = folder / "edited.yaml"
    path.write_text(model_study_yaml("edited", "sqlite:///edited.db", 6, noise=0.02, seed=5))
    _run(path, "--n-trials", "4")


@pytest.fixture(scope="module")
def four_measured(tmp_path_factory):
    return prepared_once(tmp_path_factory, "edited", _four_measured)


@pytest.mark.parametrize("edited", ["NaN", json.dumps("2.5 tokens")])
def test_a_trial_with_a_figure_the_readers_refuse_is_no_reading_of_the_sampler(tmp_path, four_measured, edited):
    folder = shutil.copytree(four_measured, tmp_path / "edited")  # this case's own copy, edited below
    db = folder / "edited.db"
    path = folder / "edited.yaml"
    con = sqlite3.connect(db)
    with con:
        changed = con.execute(
            "UPDATE trial_user_attributes SET value_json = ? WHERE key = 'accept_length' AND trial_id = "
            "(SELECT trial_id FROM trials JOIN studies USING (study_id) WHERE study_name = 'edited' AND number = 1)",
            (edited,)).rowcount
    con.close()
    assert changed == 1

    out = _run(path)  # the rest of the budget, proposed by the sampler, which models every reading
    assert "the study's budget of 6 trials is spent" in out, out
    records = load_records(open_study("edited", f"sqlite:///{db}"))
    assert records[1].status == UNREADABLE and "accept_length" in records[1].attrs["failure_class"]
    assert len(records) >= 6 and all(r.status != UNREADABLE for r in records if r.number != 1)
