"""`tuner study confirm --picks ""` (or `","`) names the flag in one line, exit 2, and measures and
writes nothing (QA: it printed "confirming 0 settings ... 2 launches", then a ValueError traceback
from the engine, "nothing to confirm")."""

from __future__ import annotations

import optuna
import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("confirm-empty")
    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump(model_study_data("c", seed=1)))
    r = CliRunner().invoke(cli, ["study", "run", str(path)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return path


@pytest.mark.parametrize("picks", ["", ",", " , "])
def test_empty_picks_is_one_line(study, picks):
    url = f"sqlite:///{study.parent / 'c.db'}"
    before = sorted(s.study_name for s in optuna.get_all_study_summaries(url))
    r = CliRunner().invoke(cli, ["study", "confirm", str(study), "--picks", picks, "--repeats", "2"],
                           catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --picks: ") and "single" in lines[0], r.output
    assert sorted(s.study_name for s in optuna.get_all_study_summaries(url)) == before  # no companion made
