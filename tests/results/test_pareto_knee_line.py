"""`tuner study pareto`'s footnote says what the knee is for the study's number of objectives."""

from __future__ import annotations

import pytest
import yaml
from support.cli_in_process import tuner_here
from support.model_study import model_study_data
from support.small_space import small_space

#: Two settings whose front is both (single_speedup 2.28 and 1.65, speedup@32 0.99 and 1.07 on the PCIe
#: profile): the smallest study with a front of two points, on a space of four (support/small_space.py)
TWO_SEEDS = [{"speculative_num_steps": s, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": d}
             for s, d in ((3, 4), (1, 2))]


@pytest.mark.parametrize("objectives, says, not_said", [
    (["speedup@32"], "knee: with one objective, its best setting", "two extremes"),
    (["single_speedup", "speedup@8", "speedup@32"], "largest sum of its objectives", "two extremes"),
    (["single_speedup", "speedup@32"], "farthest from the line between the two extremes", "largest sum"),
])
def test_the_knee_is_said_as_the_objectives_make_it(tmp_path, objectives, says, not_said):
    """QA: a study of one objective (`objectives: [speedup@32]`) and one of three were told
    "knee: the front point farthest from the line between the two extremes"."""
    data = model_study_data("k", seed=1, search_space=str(small_space(tmp_path)))
    data["objectives"] = objectives
    data["default_seed_trials"], data["seed_trials"] = False, TWO_SEEDS
    data["budget"] = {"n_trials": 2, "prune": False}  # fronts of two points or more: (3, 1, 4) and (1, 1, 2)
    (tmp_path / "k.yaml").write_text(yaml.safe_dump(data))
    assert tuner_here("study", "run", "k.yaml", cwd=tmp_path).exit_code == 0
    r = tuner_here("study", "pareto", "k.yaml", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    footnote = [line for line in r.stdout.splitlines() if line.startswith("knee:")]
    assert len(footnote) == 1 and says in footnote[0] and not_said not in footnote[0], r.stdout


def test_a_front_of_one_setting_is_not_told_of_two_extremes(tmp_path):
    """QA (qa199): a front of one setting, two objectives, was told "knee: the front point farthest
    from the line between the two extremes"; that setting is both extremes and the knee."""
    data = model_study_data("one", seed=1, search_space=str(small_space(tmp_path)))
    data["budget"] = {"n_trials": 1}
    (tmp_path / "one.yaml").write_text(yaml.safe_dump(data))
    assert tuner_here("study", "run", "one.yaml", cwd=tmp_path).exit_code == 0
    r = tuner_here("study", "pareto", "one.yaml", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert "Pareto front of 1 of 1 feasible setting" in r.stdout, r.stdout
    footnote = [line for line in r.stdout.splitlines() if line.startswith("knee:")]
    assert footnote == ["knee: the front's only setting (it is every pick)"], r.stdout
