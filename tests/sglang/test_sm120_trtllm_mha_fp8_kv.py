"""trtllm_mha as the prefill backend on SM120 with an FP8 (e4m3) KV cache: SGLang 0.5.23 refuses it
during argument handling, the baseline too (``arg_groups/attention_hook.py`` lines 207-221,
``handle_attention_backend_compatibility``: "TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3
KV cache or skip-softmax.").

QA (qa141): the simulator started Llama on an SM120 profile with ``--attention-backend trtllm_mha
--kv-cache-dtype fp8_e4m3``. Each case holds SGLang's verdict as data, from its own argument handling
on CPU (the agreement child, ``benchmarks/sglang_agreement.py``'s Llama-3 config.json, platform sm120
or sm100): the error, or the attention backend it reports.
"""

import logging

import pytest
import yaml

from tuner.sglang.attention import launch_gpu_refusal
from tuner.sglang.hardware import GpuArch
from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import PROFILES_DIR, Profile

REFUSED = "TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache or skip-softmax."
SPEC = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d", "--speculative-num-steps", "3",
        "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]

# (GPU, flags, SGLang 0.5.23: the ValueError's text, or the attention backend it reports)
CASES = [
    ("12.0", [*SPEC, "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "fp8_e4m3"], REFUSED),
    ("12.0", ["--attention-backend", "trtllm_mha", "--kv-cache-dtype", "fp8_e4m3"], REFUSED),  # the baseline
    ("12.0", [*SPEC, "--prefill-attention-backend", "trtllm_mha", "--decode-attention-backend", "flashinfer",
              "--kv-cache-dtype", "fp8_e4m3"], REFUSED),
    ("12.0", [*SPEC, "--prefill-attention-backend", "flashinfer", "--decode-attention-backend", "trtllm_mha",
              "--kv-cache-dtype", "fp8_e4m3"], "flashinfer"),  # the decode half: no such check
    ("12.0", [*SPEC, "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "fp8_e5m2"], "trtllm_mha"),
    ("12.0", [*SPEC, "--kv-cache-dtype", "fp8_e4m3"], "flashinfer"),  # SGLang's own choice there
    ("10.0", [*SPEC, "--attention-backend", "trtllm_mha", "--kv-cache-dtype", "fp8_e4m3"], "trtllm_mha"),
]


def _profile(capability: str) -> Profile:
    data = yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text())
    data["model"].update(architecture="LlamaForCausalLM", attention="mha")
    data["hardware"]["compute_capability"] = capability
    return Profile(**data)


@pytest.mark.parametrize("gpu, flags, sglang", CASES, ids=[f"sm{g[:2]}-{' '.join(f[-4:])}" for g, f, _ in CASES])
def test_the_simulator_starts_or_fails_as_sglang(gpu, flags, sglang):
    ns = parse_args(["--model-path", "m", *flags])
    if sglang == REFUSED:
        with pytest.raises(ValueError) as info:
            resolve_launch(ns, logging.getLogger("sm120-test"), _profile(gpu))
        assert str(info.value) == REFUSED
    else:
        assert resolve_launch(ns, logging.getLogger("sm120-test"), _profile(gpu)).server_args["attention_backend"] \
            == sglang


def test_the_refusal_names_sglangs_error():
    sm120 = GpuArch.parse("12.0")
    assert launch_gpu_refusal("trtllm_mha", None, None, sm120, "mha", kv_cache_dtype="fp8_e4m3") == \
        f"ValueError: {REFUSED}"
    assert launch_gpu_refusal("trtllm_mha", None, None, sm120, "mha", kv_cache_dtype="auto") is None
    assert launch_gpu_refusal("trtllm_mha", None, None, sm120, "mha", kv_cache_dtype=None) is None
