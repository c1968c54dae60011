"""tuner.engine.outcome: a measurement's verdict against the baseline -- here, the bound on a speedup
by the accept length (the same rule against a real server that answers too fast, through a whole
study: tests/engine/test_study_faults.py, mode ``fast``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.config.study import load_study
from tuner.engine.backends import Measurement
from tuner.engine.model_suite import ModelFigures
from tuner.engine.outcome import SPEEDUP_BOUND, judge_measurement, speedup_problem
from tuner.engine.records import StoredFigures
from tuner.sglang.rules import SpecConfig

BASE = StoredFigures(100.0, {32: 1000.0}, 1.0)
OBJECTIVES = ["single_speedup", "speedup@32"]


ROOT = Path(__file__).resolve().parents[2]


def verdict(single: float, at32: float, accept: float | None, config=None):
    m = Measurement(ModelFigures(single, {32: at32}, accept))
    return judge_measurement(m, SpecConfig(3, 1, 4), OBJECTIVES, BASE, config)


def study(tmp_path, backend: str):
    server = {"model": "{backend: model, model_path: m, model: {profile: dense-27b-tp1, noise: 0.1}}",
              "sim": "{backend: sim, model_path: m, draft_model_path: d}"}[backend]
    p = tmp_path / f"{backend}.yaml"
    p.write_text(f"name: o\nsearch_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}\nserver: {server}\n"
                 "objectives: [single_speedup, speedup@32]\n")
    return load_study(p)


def test_an_honest_speedup_below_the_accept_length_is_measured():
    v = verdict(230.0, 1100.0, 2.5)  # 2.3x with an accept length of 2.5
    assert v.status == "measured" and v.values == pytest.approx([2.3, 1.1])
    assert v.attrs["single_speedup"] == pytest.approx(2.3) and "failure_class" not in v.attrs


@pytest.mark.parametrize("single, at32, which", [
    (100.0 * 2.5 * SPEEDUP_BOUND * 1.01, 1000.0, "single_speedup"),   # one request too fast
    (200.0, 1000.0 * 2.5 * SPEEDUP_BOUND * 1.01, "speedup@32"),       # the sweep too fast
])
def test_a_speedup_beyond_its_accept_length_fails_the_trial_with_no_figure_kept(single, at32, which):
    v = verdict(single, at32, 2.5)
    assert v.status == "failed" and v.values is None
    assert v.attrs["failure_class"] == "bad_response"
    assert v.attrs["failure_message"].startswith(f"{which} ")
    assert "accept length of 2.50" in v.attrs["failure_message"]
    figures = [k for k in v.attrs if "tok_per_s" in k or "speedup" in k or k.startswith("accept_length")]
    assert figures == []  # nothing of it reaches the front or the export


def test_at_the_bound_itself_a_speedup_stands():
    assert speedup_problem({"single_speedup": 2.0 * SPEEDUP_BOUND}, 2.0) is None
    assert speedup_problem({"single_speedup": 2.0 * SPEEDUP_BOUND + 1e-6}, 2.0) is not None


@pytest.mark.parametrize("accept", [None, True, "2.5", float("nan"), 0.5])
def test_without_an_accept_length_the_draft_depth_bounds_it(accept):
    # (QA: a server 4x too fast that sent no spec_verify_ct nor accept length passed)
    assert speedup_problem({"single_speedup": 50.0}, accept) is None  # nothing to bound by
    assert speedup_problem({"single_speedup": 4 * SPEEDUP_BOUND}, accept, num_steps=3) is None
    said = speedup_problem({"single_speedup": 4 * SPEEDUP_BOUND + 0.01}, accept, num_steps=3)
    assert said.startswith("single_speedup 5.01x over the baseline with no accept length reported and 3 "
                           "steps")
    v = verdict(100.0 * 9, 1000.0, accept if accept is None else None)  # (3, 1, 4): at most 4 per step
    assert v.status == "failed" and v.attrs["failure_class"] == "bad_response"


def test_without_an_accept_length_a_small_tree_bounds_it_by_its_draft_tokens():
    # steps=5 topk=4 draft=3 commits at most 3 tokens a step (the root and 2 candidates verified:
    # config.landscape.most_accepted), as verify bounds its answers; it was bounded by steps + 1 = 6
    # (QA qa206), so a server 6x too fast passed
    assert speedup_problem({"single_speedup": 3 * SPEEDUP_BOUND}, None, num_steps=5, num_draft_tokens=3) is None
    said = speedup_problem({"single_speedup": 3 * SPEEDUP_BOUND + 0.01}, None, num_steps=5, num_draft_tokens=3)
    assert said is not None and "no accept length reported and 3 draft tokens (at most 3)" in said, said
    assert speedup_problem({"single_speedup": 3 * SPEEDUP_BOUND + 0.01}, None, num_steps=5, num_draft_tokens=8) is None
    m = Measurement(ModelFigures(100.0 * 3 * SPEEDUP_BOUND * 1.01, {32: 1000.0}, None))
    v = judge_measurement(m, SpecConfig(5, 4, 3), OBJECTIVES, BASE)
    assert v.status == "failed" and v.attrs["failure_class"] == "bad_response", v


def test_a_modelled_study_has_no_clock_to_doubt_but_a_simulated_one_has(tmp_path):
    # backend: model reads a table or the performance model times the study's own noise (10% here)
    too_fast = (100.0 * 2.5 * SPEEDUP_BOUND * 1.1, 1000.0, 2.5)
    assert verdict(*too_fast, config=study(tmp_path, "model")).status == "measured"
    assert verdict(*too_fast, config=study(tmp_path, "sim")).attrs["failure_class"] == "bad_response"


def test_an_accept_length_of_exactly_one_bounds_the_speedup_by_itself():
    """An accept length of 1.0 (every drafted token rejected) is a reported accept length like any
    other: no speedup above SPEEDUP_BOUND x 1.0 can be true, whatever the draft depth. (A mutation
    that took only accept lengths above 1 fell back to num_steps + 1 = 4 here and passed every test.)"""
    assert speedup_problem({"single_speedup": 1.0 * SPEEDUP_BOUND}, 1.0, num_steps=3) is None
    said = speedup_problem({"single_speedup": 2.0}, 1.0, num_steps=3)
    assert said is not None and "an accept length of 1.00" in said, said
    v = verdict(200.0, 1000.0, 1.0)  # 2x single with nothing accepted
    assert v.status == "failed" and v.attrs["failure_class"] == "bad_response"


def test_a_baseline_figure_of_zero_leaves_the_trial_incomplete():
    """A baseline of 0 tok/s (a stored baseline edited by hand, or one that measured nothing at that
    concurrency) has no speedup to give: the trial is ``incomplete``, named by the objective, never a
    division by zero that ends the run (mutation testing: ``if base is None`` passed every test)."""
    m = Measurement(ModelFigures(230.0, {32: 1100.0}, 2.5))
    v = judge_measurement(m, SpecConfig(3, 1, 4), OBJECTIVES, StoredFigures(100.0, {32: 0.0}, 1.0))
    assert v.status == "failed" and v.values is None
    assert v.attrs["failure_class"] == "incomplete"
    assert v.attrs["failure_message"] == "objective speedup@32: the baseline has no such figure"
