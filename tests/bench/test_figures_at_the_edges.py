"""SuiteResult's figures at their edges (no HTTP): the overall single-request figure's spread, a
request exactly at its goodput limit, sweep rows whatever order the concurrencies ran in, a one-token
streamed answer's TPOT, and a figure whose mean is 0."""

from __future__ import annotations

import pytest

from tuner.bench import RequestRecord, SuiteResult
from tuner.bench.stats import figure


def single(prompt: str, repeat: int, tokens: int, seconds: float) -> RequestRecord:
    start = 10.0 * repeat
    return RequestRecord("single", prompt, tokens, repeat=repeat, start_s=start, end_s=start + seconds, ok=True,
                         completion_tokens=tokens)


def sweep(c: int, index: int, start: float, end: float, tokens: int = 10, ttft: float | None = None) -> RequestRecord:
    return RequestRecord("sweep", "a", tokens, concurrency=c, index=index, start_s=start, end_s=end, ok=True,
                         completion_tokens=tokens, ttft_s=ttft)


def test_the_overall_single_figure_spreads_as_the_figure_of_its_repeats():
    # two prompts, three repeats each: the overall figure taken repeat by repeat is (a_r + b_r) / 2
    a = [100.0, 120.0, 110.0]
    b = [50.0, 40.0, 60.0]
    recs = [single("a", r, 100, 100 / v) for r, v in enumerate(a)] + [single("b", r, 100, 100 / v)
                                                                       for r, v in enumerate(b)]
    overall = figure([(x + y) / 2 for x, y in zip(a, b)])
    got = SuiteResult(suite={}, records=recs).single
    assert got.n == 3 and got.mean == pytest.approx(overall.mean)
    assert got.sd == pytest.approx(overall.sd) and got.cv == pytest.approx(overall.cv)
    # its 95% interval is Student's with n - 1 = 2 degrees of freedom, as every other figure's
    assert got.rel_ci95 == pytest.approx(overall.rel_ci95)


def test_a_request_exactly_at_its_goodput_limit_is_good():
    # SGLang's benchmark/goodput.py (and bench_serving): good when each figure is <= its limit
    recs = [sweep(2, 0, 0.0, 1.0, ttft=0.25), sweep(2, 1, 0.0, 2.0, ttft=0.5)]
    r = SuiteResult(suite={}, records=recs, stream=True)
    assert r.goodput(2, {"ttft": 500.0})["good"] == 2
    assert r.goodput(2, {"e2e": 1000.0})["good"] == 1
    assert r.goodput(2, {"ttft": 499.0})["good"] == 1


def test_sweep_rows_come_in_ascending_concurrency_whatever_order_they_ran_in():
    # a staged run measures the objectives' concurrencies first (tuner.bench.plan)
    recs = [sweep(32, 0, 0.0, 1.0), sweep(1, 0, 2.0, 3.0), sweep(8, 0, 4.0, 5.0)]
    r = SuiteResult(suite={}, records=recs)
    assert [row.concurrency for row in r.sweep_rows] == [1, 8, 32]
    assert [c for c in (int(k.split("@")[1]) for k in r.summary() if k.startswith("tok_per_s@"))] == [1, 8, 32]


def test_a_one_token_streamed_answer_has_a_tpot_of_zero():
    # (latency - ttft) / (tokens - 1) has no gap to divide by: SGLang's goodput.py counts it as 0
    one = sweep(1, 0, 0.0, 0.2, tokens=1, ttft=0.2)
    assert one.tpot_s == 0.0
    r = SuiteResult(suite={}, records=[one], stream=True)
    assert r.latency_percentile_ms("tpot", 99, 1) == 0.0
    assert r.goodput(1, {"tpot": 1.0})["good"] == 1


def test_a_figure_whose_mean_is_zero_has_no_relative_spread():
    f = figure([0.0, 0.0, 0.0])
    assert (f.mean, f.n, f.sd, f.cv, f.rel_ci95) == (0.0, 3, 0.0, None, None)
    g = figure([-1.0, 1.0])
    assert g.mean == 0.0 and g.sd == pytest.approx(2 ** 0.5) and g.cv is None and g.rel_ci95 is None
