"""``benchmarks/sglang_fuzz.py``'s ``tuner_verdict``: what the tuner says SGLang 0.5.23 does with a drawn
launch, judged against SGLang's own argument handling and launch checks by
``benchmarks/sglang_agreement.py --fuzz N``. A verdict that leaves out a check the tuner makes is a
false disagreement, which hides the true ones among it.

QA (qa208, ``--fuzz 2000 --seed 208``): the verdict never ran SGLang's launch checks
(``tuner.sglang.parallel.launch_check_refusal``, ``arg_groups/validation_hook.py``): 53 cases of
``nnodes`` not dividing tp x pp and 9 of ``chunked_prefill_size`` no multiple of the page size read
"tuner accepts; SGLang refuses: AssertionError", where the simulator and a study refuse them; and it did
not pass the KV-cache dtype to ``launch_gpu_refusal`` (trtllm_mha on SM120 with fp8_e4m3)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

from tuner.sglang.rules import SpecConfig

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
LLAMA = "Llama-3 (LlamaForCausalLM)"


@pytest.fixture(scope="module")
def fuzz():
    sys.path.insert(0, str(BENCHMARKS))  # sglang_fuzz imports sglang_agreement as a sibling
    try:
        yield importlib.import_module("sglang_fuzz")
    finally:
        sys.path.remove(str(BENCHMARKS))


def _verdict(fuzz, args: dict, tp: int = 1, gpu: str = "sm90", algorithm: str = "EAGLE3",
             spec: SpecConfig = SpecConfig(3, 1, 4)) -> dict:
    return fuzz.tuner_verdict(fuzz.Case(0, LLAMA, "head", gpu, tp, spec, args, algorithm))


@pytest.mark.parametrize("args,tp,says", [
    ({"nnodes": 3}, 1, "tp_size must be divisible by number of nodes"),
    ({"nnodes": 2}, 1, "tp_size must be divisible by number of nodes"),
    # SGLang's resolved page size: trtllm_mha's 64 (as given: 16)
    ({"attention_backend": "trtllm_mha", "chunked_prefill_size": 1000}, 1, "divisible by page_size"),
    ({"attention_backend": "triton", "page_size": 16, "chunked_prefill_size": 1000}, 1, "divisible by page_size"),
    ({"dp_size": 2, "nnodes": 2}, 2, "multi-node data-parallel replicas"),
])
def test_sglangs_launch_checks_refuse(fuzz, args, tp, says):
    want = _verdict(fuzz, args, tp=tp)
    assert (want["ok"], want["exception"]) == (False, "AssertionError"), want
    assert says in want["why"], want


@pytest.mark.parametrize("args,tp", [
    ({"nnodes": 2}, 2),
    ({"attention_backend": "triton", "page_size": 16, "chunked_prefill_size": 2048}, 1),
    ({"attention_backend": "triton", "page_size": 16, "chunked_prefill_size": -1}, 1),  # chunked prefill off
    # argv gives --chunked-prefill-size 4096 when the case does not: a multiple of every page size drawn
    ({"attention_backend": "trtllm_mha", "page_size": 128}, 1),
    # attention DP: SGLang's dp_size is 1 once enable_dp_attention moved it to attn_dp_size
    ({"enable_dp_attention": True, "dp_size": 2, "nnodes": 2}, 2),
])
def test_what_the_launch_checks_take_is_accepted(fuzz, args, tp):
    want = _verdict(fuzz, args, tp=tp)
    assert want["ok"] is True, want


def test_pipeline_parallelism_follows_the_algorithm(fuzz):
    prefill = {"pp_size": 2, "disaggregation_mode": "prefill"}
    refused = _verdict(fuzz, prefill, algorithm="EAGLE3")
    assert (refused["ok"], refused["exception"]) == (False, "AssertionError"), refused
    assert "only supports EAGLE" in refused["why"], refused
    # SGLang runs EAGLE, and NEXTN (its alias), on a prefill node; the tuner refuses pp all the same
    for algorithm in ("EAGLE", "NEXTN"):
        assert _verdict(fuzz, prefill, algorithm=algorithm)["ok"] is None
        mixed = _verdict(fuzz, {"pp_size": 2}, algorithm=algorithm)
        assert (mixed["ok"], mixed["exception"]) == (False, "AssertionError"), mixed
        assert "only supported on prefill nodes" in mixed["why"], mixed


def test_the_kv_cache_dtype_reaches_the_gpu_checks(fuzz):
    from tuner.sglang.attention import launch_gpu_refusal
    from tuner.sglang.hardware import GpuArch

    # the oracle: the tuner's own check, which the simulator and preflight run with the dtype given
    said = launch_gpu_refusal("trtllm_mha", "trtllm_mha", "trtllm_mha", GpuArch.parse("sm120"), "mha",
                              kv_cache_dtype="fp8_e4m3")
    assert said is not None
    want = _verdict(fuzz, {"attention_backend": "trtllm_mha", "kv_cache_dtype": "fp8_e4m3"}, gpu="sm120")
    assert (want["ok"], want["exception"]) == (False, said.partition(":")[0]), want
    assert _verdict(fuzz, {"attention_backend": "trtllm_mha", "kv_cache_dtype": "auto"}, gpu="sm120")["ok"] is True
