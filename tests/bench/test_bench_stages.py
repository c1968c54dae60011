"""A study's order of the suite (tuner/bench/plan.py) and the runner that follows it over HTTP: every
request of the article's order exactly once, the probe first, partial results after every stage,
and a run stopped after a stage keeps what it measured (against the simulator as a real process)."""

from __future__ import annotations

from collections import Counter

import pytest
from support.simproc import running_sim

from tuner.bench import SuiteResult, run_suite
from tuner.bench.plan import PROBE, complete_after, requests_until, stage_plan
from tuner.config.suite import load_suite

SUITE = {
    "name": "staged",
    "prompts": [{"name": "fib", "text": "Write a Python function that returns the n-th Fibonacci number."},
                {"name": "json", "text": "Return a JSON object describing three fictional employees."},
                {"name": "haiku", "text": "Write a haiku about autumn leaves falling in the rain."}],
    "single": {"lengths": [24, 48], "repeats": 2},
    "sweep": {"concurrencies": [1, 4, 8], "max_tokens": 32},
    "warmup": {"requests": 1, "max_tokens": 4},
    "timeout_s": 60,
}


def _article_order(suite):
    single = [("single", p.name, n, r) for p in suite.single_prompts() for n in suite.single_lengths(p)
              for r in range(suite.single.repeats)]
    sweep = [("sweep", c, r) for c in suite.sweep.concurrencies for r in range(suite.sweep.repeats)]
    return single + sweep


def _planned(plan):
    """Every step of the plan in the order it runs: per stage, its single requests, then its batches."""
    return [step for st in plan for step in [("single", s.prompt, s.max_tokens, s.repeat) for s in st.single]
            + [("sweep", b.concurrency, b.repeat) for b in st.sweep]]


@pytest.mark.parametrize("name", ["seed", "quick", "sharegpt-mini"])
def test_the_plan_reorders_the_suite_without_changing_it(name):
    suite = load_suite(name)
    plan = stage_plan(suite, first=[32, 99])  # 99: not swept, ignored
    assert Counter(_planned(plan)) == Counter(_article_order(suite))
    assert plan[0].name == PROBE
    assert [b.concurrency for b in plan[0].sweep] == ([32] if 32 in suite.sweep.concurrencies else [])
    # the probe asks one request per prompt, its shortest length, once
    probe = plan[0].single
    assert len(probe) == len({s.prompt for s in probe}) == len(suite.single_prompts())


def test_the_seed_suite_probe_is_a_small_share_and_fixes_the_sweep_objective():
    suite = load_suite("seed")
    plan = stage_plan(suite, first=[32])
    assert [s.name for s in plan] == [PROBE, "single 1/3", "single 2/3", "single 3/3", "sweep"]
    assert {(s.max_tokens, s.repeat) for s in plan[0].single} == {(256, 0)}
    assert complete_after(plan, 32) == 0 and complete_after(plan, None) == 3
    assert requests_until(plan, None, 0) == (5, 45)
    assert requests_until(plan, 32, 0) == (1, 1)
    # the single requests are most of a trial's GPU time (one at a time): the probe has 1/39 of their tokens
    tokens = lambda st: sum(s.max_tokens for s in st.single)  # noqa: E731
    assert tokens(plan[0]) * 39 == sum(tokens(st) for st in plan)


@pytest.fixture(scope="module")
def staged_runs():
    """A full staged run and one stopped after its probe, against one simulated server."""
    suite = load_suite(SUITE)
    plan = stage_plan(suite, first=[8])
    seen: list[tuple[int, str, float | None, float | None]] = []

    def look(index, name, result):
        seen.append((index, name, result.single_tok_per_s, result.tok_per_s_at(8)))
        return False

    with running_sim("--sim-noise", "0", speedup=50) as sim:
        full = run_suite(sim.url, suite, plan=plan, after_stage=look)
        stopped = run_suite(sim.url, suite, plan=plan, after_stage=lambda i, name, r: name == PROBE)
    return suite, plan, full, stopped, seen


def test_a_staged_run_measures_the_whole_suite_in_the_plan_order(staged_runs):
    suite, plan, full, _, seen = staged_runs
    assert full.complete and full.stopped_after is None and full.n_failed == 0
    order = [("single", r.prompt, r.max_tokens, r.repeat) if r.phase == "single" else ("sweep", r.concurrency, r.repeat)
             for r in full.records if r.phase != "warmup" and (r.phase == "single" or r.index == 0)]
    assert order == _planned(plan)
    assert [st["name"] for st in full.stages] == [s.name for s in plan]
    # after_stage saw every stage but the last, with the figures measured so far
    assert [(i, name) for i, name, *_ in seen] == [(i, s.name) for i, s in enumerate(plan[:-1])]
    assert seen[0][3] is not None and seen[0][2] is not None  # the probe: both objectives' figures


def test_partial_results_are_the_figures_of_the_requests_so_far(staged_runs):
    _, plan, full, _, seen = staged_runs
    stages = full.stage_results()
    assert [name for name, _ in stages] == [s.name for s in plan]
    for (name, partial), (_, _, single, c8) in zip(stages, seen):
        assert partial.single_tok_per_s == pytest.approx(single) and partial.tok_per_s_at(8) == pytest.approx(c8)
    assert stages[-1][1].single_tok_per_s == pytest.approx(full.single_tok_per_s)
    assert stages[0][1].tok_per_s_at(1) is None  # C=1 is not an objective here: measured last
    again = SuiteResult.from_dict(full.to_dict())
    assert again.stages == full.stages and again.stage_results()[0][1].tok_per_s_at(8) == stages[0][1].tok_per_s_at(8)


def test_a_run_stopped_after_a_stage_keeps_what_it_measured(staged_runs):
    _, plan, _, stopped, _ = staged_runs
    assert not stopped.complete and stopped.stopped_after == PROBE and stopped.error is None
    measured = [r for r in stopped.records if r.phase != "warmup"]
    assert len([r for r in measured if r.phase == "single"]) == len(plan[0].single)
    assert {r.concurrency for r in measured if r.phase == "sweep"} == {8}
    assert stopped.tok_per_s_at(8) is not None


def test_adaptive_repeats_come_after_the_plan():
    """With adaptive repeats the plan holds the fixed minimum; each row's extra repeats (here up to
    max_repeats: the interval asked for is out of reach) come at the end of the last stage."""
    suite = load_suite({**SUITE, "single": {"lengths": [24], "repeats": 2}, "sweep": {"concurrencies": [4], "max_tokens": 16},
                        "adaptive": {"rel_ci95": 1e-9, "max_repeats": 3}})
    plan = stage_plan(suite, first=[4])
    with running_sim("--sim-noise", "0.05", speedup=50) as sim:
        res = run_suite(sim.url, suite, plan=plan)
    assert res.complete and [st["name"] for st in res.stages] == [s.name for s in plan]
    single = [(r.prompt, r.repeat) for r in res.records if r.phase == "single"]
    assert Counter(p for p, _ in single) == {"fib": 3, "json": 3, "haiku": 3}
    fixed = len(_planned(plan))
    order = [("single", r.prompt, r.max_tokens, r.repeat) if r.phase == "single" else ("sweep", r.concurrency, r.repeat)
             for r in res.records if r.phase != "warmup" and (r.phase == "single" or r.index == 0)]
    assert order[:fixed] == _planned(plan)
    # each row's third request, then the level's second and third batch (its minimum is one)
    assert order[fixed:] == [("single", p, 24, 2) for p in ("fib", "json", "haiku")] + [("sweep", 4, 1), ("sweep", 4, 2)]
