"""The simulator's performance model at the edges of its documented contract (tuner/sim/model.py):
a request's first token comes from its prefill, a prompt is at least one token, and the speculative
verify buffers are sized for the larger of the running batch and the CUDA-graph batch."""

from __future__ import annotations

import re

import pytest

from tuner.sglang.rules import SpecConfig
from tuner.sim.model import PerfModel, load_profile

SPEC = SpecConfig(3, 1, 4)


@pytest.fixture(scope="module")
def pcie() -> PerfModel:
    return PerfModel(load_profile("k2.6-tp8-pcie"))


@pytest.mark.parametrize("spec", [None, SPEC], ids=["autoregressive", "eagle3"])
def test_a_one_token_answer_is_its_prefill_alone(pcie, spec):
    prompt = "Write a haiku about the sea."
    got = pcie.expected_figures(spec, prompts=[prompt], single_lengths=[1], concurrencies=[], sweep_tokens=1)
    prefill = pcie.prefill_time_s(pcie.prompt_tokens(prompt), spec)
    assert got.single_tok_per_s == pytest.approx(1.0 / prefill)


def test_a_prompt_is_at_least_one_token(pcie):
    assert pcie.prompt_tokens("a") == 1 and pcie.prompt_tokens("") == 1
    assert pcie.prompt_tokens("x" * 4000) > 1


def _needed_gb(message: str) -> float:
    return float(re.search(r"([0-9.]+) GB needed per GPU", message).group(1))


def test_verify_buffers_grow_with_the_cuda_graph_batch_beyond_the_running_batch(pcie):
    # budget too small for either: the message says what each needs
    small, large = (pcie.kv_budget_ok(SPEC, 4, 4096, mem_fraction_static=0.01, cuda_graph_max_bs=bs)
                    for bs in (4, 4096))
    assert small[0] is False and large[0] is False
    assert _needed_gb(large[1]) > _needed_gb(small[1])
    # and a graph batch under the running batch changes nothing: the running batch sizes them
    under = pcie.kv_budget_ok(SPEC, 64, 4096, mem_fraction_static=0.01, cuda_graph_max_bs=8)[1]
    at = pcie.kv_budget_ok(SPEC, 64, 4096, mem_fraction_static=0.01, cuda_graph_max_bs=64)[1]
    assert _needed_gb(under) == _needed_gb(at)
