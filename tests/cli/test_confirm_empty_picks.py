"""`tuner study confirm --picks ""` (or `","`) names the flag in one line, exit 2, and measures and
writes nothing (QA: it printed "confirming 0 settings ... 2 launches", then a ValueError traceback
from the engine, "nothing to confirm")."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
import yaml
from click.testing import CliRunner

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("confirm-empty")
    path = folder / "c.yaml"
    path.write_text(yaml.safe_dump({
        "name": "c", "search_space": str(ROOT / "search_spaces" / "eagle3.yaml"),
        "server": {"backend": "model", "model_path": "m", "draft_model_path": "d", "tp_size": 8,
                   "model": {"profile": "k2.6-tp8-pcie", "seed": 1}},
        "bench": {"suite": "quick"}, "sampler": {"seed": 1}, "budget": {"n_trials": 2}}))
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
