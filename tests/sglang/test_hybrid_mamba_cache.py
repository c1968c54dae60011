"""A hybrid (mamba / linear-attention) model's radix cache, refused by SGLang 0.5.23 during argument
handling, with or without speculation (``arg_groups/model_hook.py`` line 737, ``handle_mamba_radix_cache``;
``arg_groups/mamba_hook.py`` lines 115-163; ``arg_groups/overrides.py`` lines 455-486).

QA (qa141): the tuner's rules and the simulator accepted LFM2 with ``--page-size 16``, which SGLang
refuses ("AssertionError: no_buffer only supports page_size=1."; ``benchmarks/sglang_agreement.py --fuzz
600 --seed 141`` cases 9 and 586). Each case holds SGLang's verdict as data, from SGLang's own argument
handling on CPU (the agreement child, tiny config.json files of ``MATRIX_MODELS``' LFM2 and Qwen3-Next
and the Llama-style EAGLE-3 head): the exception and its text, or the draft tokens it resolved.
"""

import logging

import pytest
import yaml

from tuner.sglang.mamba import MambaCache
from tuner.sglang.rules import ServerContext, SpecConfig, resolve
from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import PROFILES_DIR, Profile

LOG = logging.getLogger("hybrid-mamba-test")
LFM2, QNEXT = "Lfm2ForCausalLM", "Qwen3NextForCausalLM"
CHAIN = SpecConfig(3, 1, 4)
PAGE_1 = "AssertionError: no_buffer only supports page_size=1."
TRTLLM = "AssertionError: no_buffer do not support trtllm_mha attention backend."

# (model, GPU, spec (None: no speculation), server args, SGLang 0.5.23's verdict: "Exception: text",
#  or the resolved speculative_num_draft_tokens, None without speculation)
CASES = [
    (LFM2, "9.0", CHAIN, {"page_size": 16, "attention_backend": "flashinfer"}, PAGE_1),
    (LFM2, "9.0", None, {"page_size": 16}, PAGE_1),  # the baseline too
    (LFM2, "10.0", CHAIN, {"attention_backend": "trtllm_mla", "page_size": 128}, PAGE_1),  # fuzz case 9
    (LFM2, "9.0", None, {"page_size": 16, "disable_radix_cache": True}, None),
    (LFM2, "9.0", CHAIN, {"attention_backend": "flashinfer"}, 4),
    (LFM2, "10.0", CHAIN, {"attention_backend": "trtllm_mha"}, TRTLLM),
    (LFM2, "10.0", None, {"attention_backend": "trtllm_mha"}, TRTLLM),  # fuzz case 586
    (LFM2, "10.0", CHAIN, {}, 4),  # no backend given: SGLang's own choice comes after this check
    (LFM2, "9.0", CHAIN, {"mamba_radix_cache_strategy": "extra_buffer"},
     "AssertionError: extra_buffer is not supported for Lfm2ForCausalLM; use no_buffer."),
    (QNEXT, "9.0", CHAIN, {"page_size": 16}, 4),  # extra_buffer: 256 % 16 == 0
    (QNEXT, "9.0", CHAIN, {"page_size": 16, "disable_overlap_schedule": True}, 4),
    (QNEXT, "9.0", CHAIN, {"disable_overlap_schedule": True}, 4),  # no_buffer at page size 1
    (QNEXT, "9.0", CHAIN, {"page_size": 48}, "AssertionError"),  # 256 % 48: a bare assert
    (QNEXT, "9.0", CHAIN, {"page_size": 512}, "AssertionError"),
    (QNEXT, "9.0", CHAIN, {"page_size": 128, "mamba_track_interval": 64}, "AssertionError"),
    (QNEXT, "9.0", CHAIN, {"page_size": 32, "mamba_track_interval": 96}, 4),
    (QNEXT, "9.0", SpecConfig(3, 8, 300), {"page_size": 16}, "AssertionError"),  # 300 > the interval 256
    (QNEXT, "9.0", SpecConfig(3, 8, 300), {}, "AssertionError"),
    (QNEXT, "9.0", CHAIN, {"page_size": 16, "mamba_radix_cache_strategy": "no_buffer"}, PAGE_1),
    (QNEXT, "9.0", CHAIN, {"mamba_radix_cache_strategy": "no_buffer"},
     "AssertionError: no_buffer do not support overlap schedule. Try to set disable_overlap_schedule=True."),
    (QNEXT, "9.0", CHAIN, {"page_size": 16, "linear_attn_backend": "flashinfer"}, PAGE_1),
    (QNEXT, "10.0", CHAIN, {"disable_overlap_schedule": True}, 4),  # its trtllm_mha comes later
    (QNEXT, "10.0", CHAIN, {"attention_backend": "trtllm_mha", "disable_overlap_schedule": True}, TRTLLM),
]
TREE = SpecConfig(3, 2, 4)
# With no attention backend given, SGLang's check reads the page size the Qwen3.5-hybrid override of
# SM100 sets (model_overrides/qwen3_5.py: 64 for a trtllm_mha chain, else 1 on triton), not the one given:
# the simulator's launch (the rules take the page size their caller gives)
SM100_OVERRIDE = [
    (QNEXT, "10.0", CHAIN, {"page_size": 48}, 4),  # triton, page size 1
    (QNEXT, "10.0", TREE, {"page_size": 48}, 4),
    (QNEXT, "10.0", None, {"page_size": 48}, None),
    (QNEXT, "10.0", CHAIN, {"page_size": 48, "prefill_attention_backend": "fa3",
                            "decode_attention_backend": "flashinfer"}, 4),
    (QNEXT, "10.0", CHAIN, {"mamba_radix_cache_strategy": "no_buffer", "disable_overlap_schedule": True},
     PAGE_1),  # trtllm_mha, page size 64
    (QNEXT, "10.0", TREE, {"page_size": 16, "mamba_radix_cache_strategy": "no_buffer",
                           "disable_overlap_schedule": True}, 4),
    (QNEXT, "10.0", CHAIN, {"page_size": 16, "mamba_radix_cache_strategy": "no_buffer"},
     "AssertionError: no_buffer do not support overlap schedule. Try to set disable_overlap_schedule=True."),
    (QNEXT, "9.0", CHAIN, {"page_size": 48}, "AssertionError"),  # no override off SM100
]


def _ids(cases):
    return [f"{m[:5]}-sm{g[:2]}-{'spec' if s else 'base'}-{'-'.join(f'{k}={v}' for k, v in a.items())}"
            for m, g, s, a, _ in cases]


IDS = _ids(CASES)


def _said(exc: str, text: str) -> str:
    return f"{exc}: {text}" if text else exc


@pytest.mark.parametrize("model, gpu, spec, args, sglang", CASES, ids=IDS)
def test_the_rules_refuse_as_sglang(model, gpu, spec, args, sglang):
    ctx = ServerContext(speculative_algorithm="EAGLE3" if spec else None, target_architecture=model,
                        attention_backend=args.get("attention_backend"), page_size=args.get("page_size", 1),
                        target_attention="mha", draft_attention="mha", mamba_cache=MambaCache.from_args(args))
    res = resolve(spec or SpecConfig(), ctx)
    v = res.violation
    if isinstance(sglang, str):
        assert v is not None and v.at_launch and v.rule == "mamba-cache", v
        assert _said(v.sglang_exception, v.sglang_message) == sglang
    else:
        assert v is None or not v.at_launch, v
        assert (res.effective.num_draft_tokens if spec else None) == sglang


def _profile(architecture: str, capability: str) -> Profile:
    data = yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text())
    data["model"].update(architecture=architecture, attention="mha")
    data["hardware"]["compute_capability"] = capability
    return Profile(**data)


def _flags(spec, args) -> list[str]:
    out = []
    if spec is not None:
        out += ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d"]
        for name, value in spec.server_args().items():
            out += ["--" + name.replace("_", "-"), str(value)]
    for name, value in args.items():
        out += ["--" + name.replace("_", "-")] + ([] if value is True else [str(value)])
    return out


@pytest.mark.parametrize("model, gpu, spec, args, sglang", CASES + SM100_OVERRIDE, ids=_ids(CASES + SM100_OVERRIDE))
def test_the_simulator_fails_as_sglang(model, gpu, spec, args, sglang):
    ns = parse_args(["--model-path", "m", *_flags(spec, args)])
    if isinstance(sglang, str):
        exc, _, text = sglang.partition(": ")
        with pytest.raises(AssertionError) as info:
            resolve_launch(ns, LOG, _profile(model, gpu))
        assert type(info.value).__name__ == exc and str(info.value) == text
    else:
        plan = resolve_launch(ns, LOG, _profile(model, gpu))
        assert plan.server_args.get("speculative_num_draft_tokens") == sglang
