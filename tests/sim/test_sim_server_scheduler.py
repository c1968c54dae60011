"""The batching engine in model time, without HTTP: continuous batching, the queue beyond
max_running_requests, and the look-ahead rollback that lets a late arrival join on time."""

from __future__ import annotations

import pytest

from tuner.sglang.rules import SpecConfig
from tuner.sim.model import PerfModel, load_profile
from tuner.sim.scheduler import BatchEngine, SimRequest

MODEL = PerfModel(load_profile("k2.6-tp8-pcie"))
SPEC = SpecConfig(3, 1, 4)


def _req(name: str, tokens: int) -> SimRequest:
    return SimRequest(rid=name, prompt_tokens=20, max_new_tokens=tokens, predictability=0.7)


def _engine(spec=SPEC, mrr=48, seed=3) -> BatchEngine:
    return BatchEngine(MODEL, spec=spec, max_running_requests=mrr, speedup=1.0, seed=seed,
                       clock=lambda: 0.0)


def _run_until(engine: BatchEngine, t: float) -> None:
    while engine._runnable() and engine.now_m < t:
        engine._step()


def _finish_all(engine: BatchEngine) -> None:
    while engine._runnable():
        engine._step()


def test_late_arrival_after_rollback_matches_step_by_step():
    arrival = 0.5  # model seconds, a few steps into the first request
    # Reference: time simulated step by step; B is known from its arrival on.
    ref = _engine()
    a_ref, b_ref = _req("a", 200), _req("b", 50)
    ref.waiting.append(a_ref)
    _run_until(ref, arrival)
    b_ref.arrival_m = arrival
    ref.waiting.append(b_ref)
    _finish_all(ref)
    # The engine's way: look ahead far past the arrival, roll back, replay to it, then continue.
    eng = _engine()
    a, b = _req("a", 200), _req("b", 50)
    eng.waiting.append(a)
    snap = eng._snapshot()
    _run_until(eng, 3.0)
    assert a.generated > 50  # the look-ahead ran well past the arrival
    eng._restore(snap)
    _run_until(eng, arrival)
    b.arrival_m = arrival
    eng.waiting.append(b)
    _finish_all(eng)
    assert (a.finish_m, b.finish_m) == (a_ref.finish_m, b_ref.finish_m)
    assert (a.verify_ct, b.verify_ct) == (a_ref.verify_ct, b_ref.verify_ct)
    assert a.generated == 200 and b.generated == 50


def test_queue_beyond_max_running_requests():
    engine = _engine(spec=None, mrr=2)
    reqs = [_req(str(i), 10) for i in range(3)]
    engine.simulate(reqs)
    first, second, third = sorted(r.finish_m for r in reqs)
    assert first == second  # the first two ran together
    # the third waited for a free slot: it needs its own prefill and 9 decode steps after them
    assert third - second > 9 * MODEL.decode_step_time_s(1, None)


def test_autoregressive_batch_matches_model_figure():
    prompts = ["Write a Python function that returns the n-th Fibonacci number.",
               "Write a haiku about autumn leaves falling in the rain."]
    figures = MODEL.expected_figures(None, prompts=prompts, single_lengths=[64], concurrencies=[8],
                                     sweep_tokens=64)
    engine = _engine(spec=None)
    reqs = [SimRequest(rid=str(i), prompt_tokens=MODEL.prompt_tokens(prompts[i % 2]), max_new_tokens=64,
                       predictability=MODEL.predictability(prompts[i % 2])) for i in range(8)]
    assert 8 * 64 / engine.simulate(reqs) == pytest.approx(figures.tok_per_s[8], rel=0.01)


def test_speculative_requests_take_fewer_steps_than_tokens():
    engine = _engine()
    r = _req("a", 120)
    engine.simulate([r])
    assert r.generated == 120
    assert r.verify_ct < 119  # several tokens per verify step
    # 119 tokens after the prefill's one: every verify step gives its accepted drafts plus one
    # (the last step may accept more than the request still needed)
    assert r.correct_drafts >= 119 - r.verify_ct
