"""The simulator's argument handling against SGLang 0.5.23's on cases nobody wrote, in-process.

QA (qa123): a differential grid, SGLang's own ``prepare_server_args`` + ``resolve_once`` on CPU (stubbed
GPU imports, ``benchmarks/sglang_agreement.py``'s child, a tiny config.json of each model) against
``tuner.sim.args.resolve_launch`` with a profile of the same architecture, attention kind and GPU.
Each case holds SGLang's verdict as data, with the SGLang source that decides it.
"""

import logging

import pytest
import yaml

from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import PROFILES_DIR, Profile

LOG = logging.getLogger("sim-edges-test")


def _profile(architecture: str, attention: str = "mha", capability: str = "9.0") -> Profile:
    """The dense profile as a model of ``architecture`` on GPUs of ``capability``."""
    data = yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text())
    data["model"].update(architecture=architecture, attention=attention)
    data["hardware"]["compute_capability"] = capability
    return Profile(**data)


def _launch(*flags: str, profile: Profile | None = None):
    ns = parse_args(["--model-path", "m", *flags])
    return resolve_launch(ns, LOG, profile or _profile("Qwen3ForCausalLM"))


def _spec(algorithm: str, steps=3, topk=1, draft=4) -> list[str]:
    return ["--speculative-algorithm", algorithm, "--speculative-draft-model-path", "d",
            "--speculative-num-steps", str(steps), "--speculative-eagle-topk", str(topk),
            "--speculative-num-draft-tokens", str(draft)]


@pytest.mark.parametrize("given, runs", [("nextn", "EAGLE"), ("NEXTN", "EAGLE"), ("eagle3", "EAGLE3"),
                                         ("Eagle", "EAGLE"), ("EAGLE3", "EAGLE3")])
def test_the_algorithm_is_reported_as_sglang_resolves_it(given, runs):
    # speculative_hook.py, handle_speculative_decoding: `speculative_algorithm.upper()`, then
    # _resolve_speculative_algorithm_alias: NEXTN (and EAGLE) -> "EAGLE". SGLang's /server_info for
    # `--speculative-algorithm nextn` says "EAGLE"; the simulator said "nextn".
    plan = _launch(*_spec(given))
    assert plan.server_args["speculative_algorithm"] == runs


MLA_K2 = ("DeepseekV3ForCausalLM", "mla")
EAGLE3 = _spec("EAGLE3")


def test_tokenspeed_mla_off_sm100_is_refused_as_cutedsl_mla():
    # serving_hook.py, _handle_deprecated_args renames tokenspeed_mla to cutedsl_mla before the
    # attention hook; overrides.py, _cutedsl_prefill_backend_fill then refuses it off SM100. SGLang's
    # child for DeepSeek-V3 on sm90: "ValueError: CuteDSL MLA backend is only supported on Blackwell
    # GPUs (SM100)...". The simulator started (it checked the deprecated name, which no check knows).
    with pytest.raises(ValueError, match=r"CuteDSL MLA backend is only supported on Blackwell GPUs \(SM100\)"):
        _launch(*EAGLE3, "--attention-backend", "tokenspeed_mla", profile=_profile(*MLA_K2, "9.0"))


def test_tokenspeed_mla_on_sm100_runs_and_is_reported_as_cutedsl_mla():
    # SGLang's child for DeepSeek-V3 on sm100: accepted; attention_backend cutedsl_mla, kv_cache_dtype
    # fp8_e4m3 ("tokenspeed_mla required FP8 KV"), speculative_attention_mode decode.
    plan = _launch(*EAGLE3, "--attention-backend", "tokenspeed_mla", profile=_profile(*MLA_K2, "10.0"))
    args = plan.server_args
    assert (args["attention_backend"], args["kv_cache_dtype"], args["speculative_attention_mode"]) == \
        ("cutedsl_mla", "fp8_e4m3", "decode")


@pytest.mark.parametrize("profile", [_profile(*MLA_K2, "10.0"), _profile("LlamaForCausalLM", "mha", "10.0")],
                         ids=["deepseek-v3", "llama"])
def test_cutedsl_mla_as_the_prefill_backend_is_refused_on_sm100_too(profile):
    # overrides.py, _cutedsl_prefill_backend_fill: `assert view.prefill_attention_backend !=
    # "cutedsl_mla"` before its GPU check. SGLang's child on sm100 (DeepSeek-V3, prefill and decode
    # cutedsl_mla; Llama-3, prefill cutedsl_mla): AssertionError. The simulator started both.
    with pytest.raises(AssertionError, match="CuteDSL MLA only supports decoding for now"):
        _launch(*EAGLE3, "--prefill-attention-backend", "cutedsl_mla", "--decode-attention-backend",
                "cutedsl_mla" if profile.model.attention == "mla" else "flashinfer", profile=profile)


def test_trtllm_mla_is_checked_before_a_cutedsl_mla_prefill():
    # overrides.py runs _mla_kv_cache_dtype_checks (trtllm_mla: Blackwell only) before
    # _cutedsl_prefill_backend_fill: SGLang's child on sm90, prefill cutedsl_mla, decode trtllm_mla:
    # "ValueError: TRTLLM MLA backend is only supported on Blackwell GPUs (SM100/SM12x)..."
    with pytest.raises(ValueError, match="TRTLLM MLA backend is only supported on Blackwell"):
        _launch(*EAGLE3, "--prefill-attention-backend", "cutedsl_mla", "--decode-attention-backend", "trtllm_mla",
                profile=_profile(*MLA_K2, "9.0"))


@pytest.mark.parametrize("capability, backend", [("8.0", "fa3"), ("9.0", "fa3"), ("10.0", "trtllm_mha"),
                                                 ("12.0", "fa3")])
def test_an_olmo2_profile_without_a_backend_starts_on_olmo2s_own_choice(capability, backend):
    # model_overrides/olmo2.py, _olmo2_overrides: attention_backend unset -> trtllm_mha on SM100, fa3
    # on other GPUs from SM80. SGLang's child for an Olmo2 config.json, EAGLE3 (3, 1, 4), no backend:
    # accepted on fa3 (sm80, sm90, sm120) and trtllm_mha (sm100). The simulator picked the generic
    # flashinfer, then refused it itself (model_hook.py's Olmo2 AssertionError): a study of an Olmo2
    # profile (the tuner pins no backend for Olmo2) failed every launch.
    plan = _launch(*EAGLE3, profile=_profile("Olmo2ForCausalLM", "mha", capability))
    assert plan.server_args["attention_backend"] == backend


def test_a_backend_the_model_refuses_is_refused_without_speculation_too():
    # model_hook.py, handle_model_specific_adjustments runs with or without speculation. SGLang's
    # child for an Olmo2 config.json on sm90, --attention-backend flashinfer, no speculative flag:
    # "AssertionError: FlashInfer backend can significantly degrade the performance of Olmo3
    # models." The simulator started the baseline (it asked the rules only when speculating).
    with pytest.raises(AssertionError, match="FlashInfer backend can significantly degrade"):
        _launch("--attention-backend", "flashinfer", profile=_profile("Olmo2ForCausalLM"))


def test_the_model_hook_refuses_before_the_gpu_checks():
    # pipeline.py: model_hook.py before attention_hook.py. SGLang's child for GPT-OSS on sm90 with
    # --attention-backend cutedsl_mla: "AssertionError: GptOssForCausalLM requires one of [...]";
    # the simulator said "ValueError: CuteDSL MLA backend is only supported on Blackwell GPUs".
    with pytest.raises(AssertionError, match="GptOssForCausalLM requires one of"):
        _launch(*EAGLE3, "--attention-backend", "cutedsl_mla", profile=_profile("GptOssForCausalLM"))


# (SGLang's child: config.json architecture and kind, GPU, flags; SGLang's resolved page_size)
PAGE_CASES = [
    ("prefill hpc_ops snaps to 64 (grid #989)", ("Qwen3MoeForCausalLM", "mha", "8.0"),
     _spec("EAGLE3", 7, 1, 2) + ["--prefill-attention-backend", "hpc_ops"], 64),
    ("draft backend trtllm_mha snaps to 64 (grid #992)", ("GptOssForCausalLM", "mha", "8.9"),
     _spec("EAGLE3", 5, 2, 64) + ["--speculative-draft-attention-backend", "trtllm_mha"], 64),
    ("fa4 on SM100 runs 128 (grid #56)", ("Gemma3ForCausalLM", "mha", "10.0"),
     _spec("NEXTN", 4, 1, 6) + ["--attention-backend", "fa4"], 128),
    ("tokenspeed_mla (cutedsl_mla) on SM100 runs 64", ("DeepseekV3ForCausalLM", "mla", "10.0"),
     _spec("EAGLE3") + ["--attention-backend", "tokenspeed_mla"], 64),
    ("no backend, Olmo2 on SM100: trtllm_mha's 64", ("Olmo2ForCausalLM", "mha", "10.0"), _spec("EAGLE3"), 64),
    ("hpc_ops, page 256 given, no speculation: 64", ("Qwen3ForCausalLM", "mha", "9.0"),
     ["--attention-backend", "hpc_ops", "--page-size", "256"], 64),
]


@pytest.mark.parametrize("what, model, flags, page", PAGE_CASES, ids=[c[0] for c in PAGE_CASES])
def test_the_page_size_is_reported_as_sglang_resolves_it(what, model, flags, page):
    # overrides.py, _mla_backend_page_constraints and _fa4_page_constraint (attention_hook.py): SGLang
    # snaps the page size to what the backends take, and /server_info says the snapped size. The
    # simulator reported the page size as given (1 unset), whatever the backends.
    plan = _launch(*flags, profile=_profile(*model))
    assert plan.server_args["page_size"] == page


# (SGLang's child: config.json architecture and kind on sm90, flags; SGLang's resolved attention_backend)
BACKEND_CASES = [
    ("prefill and decode fa3 given over attention triton", ("Qwen3ForCausalLM", "mha"),
     ["--attention-backend", "triton", "--prefill-attention-backend", "fa3", "--decode-attention-backend", "fa3"],
     "fa3"),
    ("SGLang's own fa3 with fp8_e5m2 KV", ("Qwen3ForCausalLM", "mha"), ["--kv-cache-dtype", "fp8_e5m2"], "triton"),
    ("fa3 given for an MLA model with fp8_e5m2 KV", ("DeepseekV3ForCausalLM", "mla"),
     ["--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e5m2"], "triton"),
]


@pytest.mark.parametrize("what, model, flags, backend", BACKEND_CASES, ids=[c[0] for c in BACKEND_CASES])
def test_the_attention_backend_is_reported_as_sglang_resolves_it(what, model, flags, backend):
    # overrides.py, _attention_backend_default (equal prefill and decode backends are the attention
    # backend) and _attention_backend_fa3_fp8_fallback (fa3 with fp8_e5m2 KV runs triton). The
    # simulator reported --attention-backend as given (or SGLang's default before the fallback).
    plan = _launch(*EAGLE3, *flags, profile=_profile(*model, "9.0"))
    assert plan.server_args["attention_backend"] == backend


def test_cutedsl_mla_as_the_attention_backend_alone_is_no_prefill_refusal():
    # launch_gpu_refusal's callers may pass prefill and decode with their fallback to the attention
    # backend (benchmarks/sglang_fuzz.py passes ServerContext.backends()): SGLang's child for
    # DeepSeek-V3 on sm100 with --attention-backend cutedsl_mla accepts it (it fills prefill with
    # trtllm_mla); only a prefill backend given as cutedsl_mla is its AssertionError.
    from tuner.sglang.attention import launch_gpu_refusal
    from tuner.sglang.hardware import GpuArch

    b200 = GpuArch(10, 0)
    assert launch_gpu_refusal("cutedsl_mla", "cutedsl_mla", "cutedsl_mla", b200, "mla") is None
    assert launch_gpu_refusal("cutedsl_mla", "cutedsl_mla", "cutedsl_mla", b200, "mla",
                              prefill_given="cutedsl_mla").startswith("AssertionError: CuteDSL MLA only supports")


@pytest.mark.parametrize("capability, flags, backend", [
    ("8.0", [], "triton"), ("9.0", [], "triton"), ("10.0", [], "trtllm_mha"), ("12.0", [], "triton"),
    ("9.0", ["--prefill-attention-backend", "triton"], "triton")])
def test_a_gemma4_profile_without_a_backend_starts_on_gemma4s_own_choice(capability, flags, backend):
    # model_overrides/gemma4.py, _gemma4_overrides: attention_backend unset (one split backend given
    # too) -> trtllm_mha on SM100, triton elsewhere. SGLang's child for a Gemma4ForCausalLM
    # config.json, EAGLE3 (3, 1, 4): accepted on triton (sm80, sm90, sm120; also with only
    # --prefill-attention-backend triton on sm90) and trtllm_mha (sm100). The simulator picked the
    # generic fa3 or flashinfer and refused it itself (model_hook.py's "Gemma4 only supports ...").
    plan = _launch(*EAGLE3, *flags, profile=_profile("Gemma4ForCausalLM", "mha", capability))
    assert plan.server_args["attention_backend"] == backend


@pytest.mark.parametrize("flags", [_spec("EAGLE3") + ["--prefill-attention-backend", "triton"],
                                   ["--decode-attention-backend", "fa3"]],
                         ids=["prefill given", "baseline, decode given"])
def test_gpt_oss_with_one_split_backend_and_no_attention_backend_is_refused(flags):
    # model_overrides/gpt_oss.py sets GPT-OSS's backend only when all three are unset
    # (is_attention_backend_not_set); model_hook.py then checks prefill and decode, the missing one
    # None. SGLang's child on sm90: "AssertionError: GptOssForCausalLM requires one of [...] - Prefill:
    # None - Decode: fa3" (and likewise for prefill triton alone). The simulator filled the missing
    # one with SGLang's later generic default and started.
    with pytest.raises(AssertionError, match="GptOssForCausalLM requires one of"):
        _launch(*flags, profile=_profile("GptOssForCausalLM", "mha", "9.0"))


@pytest.mark.parametrize("flags, error", [
    (["--tp-size", "4", "--attn-dp-size", "3"], AssertionError),
    (["--tp-size", "2", "--enable-dp-attention", "--dp-size", "4"], AssertionError),
    (_spec("EAGLE3") + ["--tp-size", "1", "--attn-dp-size", "2"], AssertionError),
    (["--tp-size", "4", "--enable-dp-attention", "--dp-size", "3", "--attn-dp-size", "2"], ValueError),
])
def test_attention_dp_that_does_not_divide_tp_is_refused(flags, error):
    # parallel_hook.py, handle_data_parallelism: `assert cfg.tp_size % cfg.attn_dp_size == 0` (after
    # handle_deprecated_dp_attention turns --enable-dp-attention --dp-size N into --attn-dp-size N),
    # and DP replicas with attention DP are a ValueError. SGLang's child refuses each of these, with or
    # without speculation; the simulator started them (it read no DP flag).
    with pytest.raises(error):
        _launch(*flags)


def test_attention_dp_that_divides_tp_starts_with_sglangs_layout():
    # SGLang's child: --tp-size 4 --enable-dp-attention --dp-size 2 is accepted, and its resolved
    # args say attn_dp_size 2, dp_size 1, enable_dp_attention true (the deprecated spelling moved)
    args = _launch("--tp-size", "4", "--enable-dp-attention", "--dp-size", "2").server_args
    assert (args["attn_dp_size"], args["dp_size"], args["enable_dp_attention"]) == (2, 1, True)


@pytest.mark.parametrize("flags, backend, page", [([], "trtllm_mha", 64), (["--page-size", "16"], "trtllm_mha", 16),
                                                  (["--speculative-eagle-topk", "4"], "flashinfer", 1)])
def test_a_server_without_speculation_on_sm100_runs_sglangs_chain_backend(flags, backend, page):
    # model_override_base.py, get_default_attn_backend: on SM100 an MHA model gets trtllm_mha when
    # is_no_spec_infer_or_topk_one holds and (speculative_algorithm is None or topk is given).
    # SGLang's child for a Qwen3 config.json on sm100, no speculative algorithm: trtllm_mha, page 64
    # (16 when given); with a topk of 4 given (and no algorithm), flashinfer. The simulator read a
    # missing topk as a speculative server's (flashinfer, page 1).
    plan = _launch(*flags, profile=_profile("Qwen3ForCausalLM", "mha", "10.0"))
    assert (plan.server_args["attention_backend"], plan.server_args["page_size"]) == (backend, page)


@pytest.mark.parametrize("flags, message", [
    (["--kv-cache-dtype", "fp8_e5m2"], "TensorRT-LLM MLA backend only supports kv-cache-dtype"),
    (["--kv-cache-dtype", "bfloat16"], "TensorRT-LLM MLA backend only supports kv-cache-dtype"),
    (_spec("EAGLE3") + ["--attention-backend", "cutedsl_mla", "--kv-cache-dtype", "fp8_e5m2"],
     "CuteDSL MLA backend only supports kv-cache-dtype"),
])
def test_an_mla_kv_cache_dtype_trtllm_mla_or_cutedsl_mla_do_not_take_is_refused(flags, message):
    # overrides.py, _mla_kv_cache_dtype_checks (trtllm_mla: fp8_e4m3, bf16 or auto, not "bfloat16") and
    # _cutedsl_prefill_backend_fill (cutedsl_mla: bfloat16 too), each after its GPU check. SGLang's
    # child for DeepSeek-V3 on sm100 (trtllm_mla is its own choice there, no backend given) refuses
    # these with a ValueError; the simulator started them.
    with pytest.raises(ValueError, match=message):
        _launch(*flags, profile=_profile(*MLA_K2, "10.0"))


def test_cutedsl_mla_takes_bfloat16_kv():
    # SGLang's child: DeepSeek-V3 on sm100, --attention-backend cutedsl_mla --kv-cache-dtype bfloat16:
    # accepted (its prefill becomes trtllm_mla, whose dtype check reads attention and decode only)
    plan = _launch("--attention-backend", "cutedsl_mla", "--kv-cache-dtype", "bfloat16",
                   profile=_profile(*MLA_K2, "10.0"))
    assert plan.server_args["attention_backend"] == "cutedsl_mla"


def test_topk_0_is_no_chain_for_sglangs_backend_choice():
    # utils/common.py, is_no_spec_infer_or_topk_one: `speculative_eagle_topk == 1` (and page size 1),
    # so topk 0 is not a chain. SGLang's child for a Qwen3 config.json on sm90, EAGLE3 (2, 0, 3), no
    # backend: accepted on flashinfer; the simulator took topk 0 for a chain (fa3).
    plan = _launch(*_spec("EAGLE3", 2, 0, 3), profile=_profile("Qwen3ForCausalLM", "mha", "9.0"))
    assert plan.server_args["attention_backend"] == "flashinfer"


@pytest.mark.parametrize("flags", [["--disable-cuda-graph"], ["--disable-decode-cuda-graph"],
                                   ["--cuda-graph-backend-decode", "disabled"],
                                   ["--cuda-graph-config", '{"decode": {"backend": "disabled"}}'],
                                   ["--attention-backend", "torch_native"]],
                         ids=["disable-cuda-graph", "disable-decode", "backend-decode", "config", "torch_native"])
def test_a_server_without_decode_cuda_graphs_runs_every_decode_step_eager(flags):
    # cuda_graph_hook.py, _parse_cuda_graph_config (the legacy and per-phase switches, the JSON config)
    # and attention_hook.py (torch_native, flex_attention) set the decode CUDA-graph backend to
    # "disabled": SGLang runs every decode step eager. The simulator ignored them and timed batches up
    # to --cuda-graph-max-bs-decode as captured graphs: a study that disabled them measured too fast.
    from tuner.sim.api import SimService
    from tuner.sim.model import PerfModel

    profile = _profile("Qwen3ForCausalLM")
    plan = _launch(*EAGLE3, *flags, profile=profile)
    graphed = _launch(*EAGLE3, profile=profile)
    model = PerfModel(profile)
    eager = SimService(plan, model, profile_name="p", speedup=1.0, seed=0).engine
    normal = SimService(graphed, model, profile_name="p", speedup=1.0, seed=0).engine
    step = [model.decode_step_time_s(1, e.spec, e.cuda_graph_max_bs) for e in (eager, normal)]
    # one request is within every graph size: only the eager launch overhead tells them apart
    extra = (profile.model.layers + profile.draft.layers) * profile.runtime.eager_layer_overhead_us * 1e-6
    assert step[0] > step[1] + extra


@pytest.mark.parametrize("flags", [["--cuda-graph-bs-decode", "1", "2", "4", "8"],
                                   ["--cuda-graph-max-bs-decode", "64", "--cuda-graph-bs-decode", "1", "2", "4", "8"],
                                   ["--cuda-graph-config", '{"decode": {"max_bs": 8}}'],
                                   ["--cuda-graph-max-bs-decode", "64", "--cuda-graph-config", '{"decode": {"bs": [2, 8]}}']],
                         ids=["bs-list", "bs-list-over-max", "config-max_bs", "config-bs"])
def test_the_decode_graph_sizes_cap_the_captured_batch_as_max_bs_does(flags):
    # SGLang 0.5.23 captures decode graphs up to the JSON's decode max_bs (it overrides the flags:
    # cuda_graph_hook.py, parse_cuda_graph_config) and, given a decode bs list from the flag or the JSON,
    # up to its largest entry, whatever max_bs said (memory_hook.py lines 201-207): batches above run
    # eager. QA (qa226): the simulator read --cuda-graph-max-bs-decode alone and timed a batch of 16
    # under --cuda-graph-bs-decode 1 2 4 8 as a captured graph (the profile's default, 160).
    from tuner.sim.api import SimService
    from tuner.sim.model import PerfModel

    profile = _profile("Qwen3ForCausalLM")
    model = PerfModel(profile)
    sized = SimService(_launch(*EAGLE3, *flags, profile=profile), model, profile_name="p", speedup=1.0,
                       seed=0).engine
    eight = SimService(_launch(*EAGLE3, "--cuda-graph-max-bs-decode", "8", profile=profile), model,
                       profile_name="p", speedup=1.0, seed=0).engine
    default = SimService(_launch(*EAGLE3, profile=profile), model, profile_name="p", speedup=1.0, seed=0).engine
    assert sized.cuda_graph_max_bs == eight.cuda_graph_max_bs == 8
    step = [model.decode_step_time_s(16, e.spec, e.cuda_graph_max_bs) for e in (sized, eight, default)]
    assert step[0] == step[1] > step[2]  # a batch of 16 runs eager above 8, as a graph by default
