"""`tuner study pareto`'s footnote says what the knee is for the study's number of objectives."""

from __future__ import annotations

import pytest
import yaml
from support.cli_in_process import tuner_here
from support.model_study import model_study_data


@pytest.mark.parametrize("objectives, says, not_said", [
    (["speedup@32"], "knee: with one objective, its best setting", "two extremes"),
    (["single_speedup", "speedup@8", "speedup@32"], "largest sum of its objectives", "two extremes"),
    (["single_speedup", "speedup@32"], "farthest from the line between the two extremes", "largest sum"),
])
def test_the_knee_is_said_as_the_objectives_make_it(tmp_path, objectives, says, not_said):
    """QA: a study of one objective (`objectives: [speedup@32]`) and one of three were told
    "knee: the front point farthest from the line between the two extremes"."""
    data = model_study_data("k", seed=1)
    data["objectives"] = objectives
    data["budget"] = {"n_trials": 2, "prune": False}
    (tmp_path / "k.yaml").write_text(yaml.safe_dump(data))
    assert tuner_here("study", "run", "k.yaml", cwd=tmp_path).exit_code == 0
    r = tuner_here("study", "pareto", "k.yaml", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    footnote = [line for line in r.stdout.splitlines() if line.startswith("knee:")]
    assert len(footnote) == 1 and says in footnote[0] and not_said not in footnote[0], r.stdout
