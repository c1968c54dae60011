"""A garbage collection in the tuner's process must not fall inside a sweep batch.

QA (the re-landing of the simulator's SGLang-fidelity work): the study worker's first full
collection after start-up (85-95 ms of CPU, 100-430 ms of wall time on a loaded machine) fell
between two submissions of the baseline's C=32 batch; the last requests left that much later, the
batch's span (from its first submission) grew by it, and on the simulator at 20x by 20 times it:
the baseline read 52 tok/s at C=32 instead of ~500 and the next trial failed as bad_response.

The test stands in for a slow machine: while the C=32 batch is being submitted, each of the first
three collections (made frequent with a low threshold) takes 0.1 s of wall time. The batch's
model-time throughput must stay above 0.3 of what the performance model predicts (a loaded machine
reads 0.55-0.95 of it; three slow collections inside the batch, 0.13).
"""

from __future__ import annotations

import gc
import time

from support.simproc import running_sim

from tuner.bench import run_suite
from tuner.bench.client import BenchClient
from tuner.config.suite import load_suite
from tuner.sim.model import PerfModel, load_profile

C = 32
SUITE = {
    "name": "gc-batch",
    "prompts": [{"name": "fib", "text": "Write a Python function that returns the n-th Fibonacci number."}],
    "single": {"lengths": [], "repeats": 1},
    "sweep": {"concurrencies": [C], "max_tokens": 16},
    "warmup": {"requests": 1, "max_tokens": 4},
    "timeout_s": 600,
}
SIM_FLAGS = ("--model-path", "moonshotai/Kimi-K2.6", "--tp-size", "8", "--sim-profile", "k2.6-tp8-pcie",
             "--max-running-requests", str(C), "--cuda-graph-max-bs-decode", str(C), "--sim-noise", "0")


def run_with_slow_collections(suite, slow_now):
    """``suite`` on a simulator at 20x; while ``slow_now()`` holds, each collection (made frequent with
    a low threshold) takes 0.1 s of wall time, as on a loaded machine."""
    def slow_collection(phase, info):
        if phase == "start" and slow_now():
            time.sleep(0.1)

    threshold = gc.get_threshold()
    gc.set_threshold(10, *threshold[1:])
    gc.callbacks.append(slow_collection)
    try:
        with running_sim(*SIM_FLAGS, speedup=20.0, timeout_s=60) as sim:
            res = run_suite(sim.url, suite)
    finally:
        gc.callbacks.remove(slow_collection)
        gc.set_threshold(*threshold)
    assert res.n_failed == 0, [r.error for r in res.records if not r.ok]
    return res


def test_a_collection_during_a_sweep_batch_does_not_spread_its_submissions(monkeypatch):
    suite = load_suite(SUITE)
    model = PerfModel(load_profile("k2.6-tp8-pcie"))
    want = model.expected_figures(None, prompts=[p.text for p in suite.prompts], single_lengths=[],
                                  concurrencies=[C], sweep_tokens=16, cuda_graph_max_bs=C).tok_per_s[C]
    state = {"submitting": False, "slow": 3}
    original = BenchClient.request

    async def request(self, record, *args, **kwargs):
        # from the batch's first submission on, the next three collections are slow
        state["submitting"] = state["submitting"] or record.phase == "sweep"
        return await original(self, record, *args, **kwargs)

    def slow_now() -> bool:
        if state["submitting"] and state["slow"] > 0:
            state["slow"] -= 1
            return True
        return False

    monkeypatch.setattr(BenchClient, "request", request)
    got = run_with_slow_collections(suite, slow_now).tok_per_s_at(C)
    assert got is not None and got >= 0.3 * want, (
        f"C={C} read {got} tok/s (model time), the model says {want:.1f}: a collection spread the batch")


def test_a_collection_during_a_single_request_is_not_read_as_serving_time(monkeypatch):
    suite = load_suite({**SUITE, "name": "gc-single", "single": {"lengths": [32], "repeats": 3},
                        "sweep": {"concurrencies": [1], "max_tokens": 16}})
    model = PerfModel(load_profile("k2.6-tp8-pcie"))
    want = model.expected_figures(None, prompts=[p.text for p in suite.prompts], single_lengths=[32],
                                  concurrencies=[1], sweep_tokens=16, cuda_graph_max_bs=C).single_tok_per_s
    state = {"measuring": False}
    original = BenchClient.request

    async def request(self, record, *args, **kwargs):
        # every collection inside a single request is slow: each is 32 tokens, ~60 ms at 20x
        state["measuring"] = record.phase == "single"
        try:
            return await original(self, record, *args, **kwargs)
        finally:
            state["measuring"] = False

    monkeypatch.setattr(BenchClient, "request", request)
    got = run_with_slow_collections(suite, lambda: state["measuring"]).single_tok_per_s
    # the server's own latency carries most of a single request's figure: 0.73 of the model's with
    # the collections inside (QA), 0.97-1.0 without them on a machine at load 8
    assert got is not None and got >= 0.88 * want, (
        f"single read {got} tok/s (model time), the model says {want:.1f}: a collection was read as serving time")
