"""Cases nobody wrote where the tuner's backend, page-size and GPU facts (``tuner.sglang.attention``,
``model``, ``rules.resolved_page_size``) and SGLang 0.5.23 disagreed: found by
``benchmarks/sglang_agreement.py --fuzz N --seed S`` (SGLang's own argument handling on CPU, a
config.json of the shape below). Each case holds SGLang's verdict as data (checked with the agreement
child), the source file and function that decide it, and the fuzz line that found it."""

import pytest

from tuner.sglang.attention import gpu_refusal, sglang_default_backend, sglang_default_page_size
from tuner.sglang.hardware import GpuArch
from tuner.sglang.model import facts_from_config
from tuner.sglang.rules import ServerContext, SpecConfig, resolve, resolved_page_size

S = SpecConfig

A100, L40S, H100, B200, THOR, RTX_PRO = (GpuArch(8, 0), GpuArch(8, 9), GpuArch(9, 0), GpuArch(10, 0),
                                         GpuArch(11, 0), GpuArch(12, 0))
LLAMA = {"architectures": ["LlamaForCausalLM"], "hidden_size": 256, "num_attention_heads": 4,
         "num_key_value_heads": 2}
QWEN3_ASYM = {"architectures": ["Qwen3ForCausalLM"], "hidden_size": 256, "num_attention_heads": 4,
              "head_dim": 64, "v_head_dim": 32}
KIMI = {"architectures": ["DeepseekV3ForCausalLM"], "kv_lora_rank": 64}
DSV32 = {**KIMI, "architectures": ["DeepseekV32ForCausalLM"], "index_topk": 2048}
GPT_OSS = {"architectures": ["GptOssForCausalLM"]}
QWEN3_NEXT = {"architectures": ["Qwen3NextForCausalLM"]}


# (fuzz line, config.json, GPU, topk as given, page size as given, prefill/decode given, SGLang's
#  attention_backend; the source)
BACKEND_CASES = [
    ("--seed 1 --fuzz-case 239: GLM-4.5-like Llama, all unset on SM100", LLAMA, B200, None, None, False,
     "flashinfer", "model_override_base.py, get_default_attn_backend: trtllm_mha on SM100 needs "
     "speculative_eagle_topk given (`cfg.speculative_eagle_topk is not None`)"),
    ("all unset on Hopper: is_no_spec_infer_or_topk_one holds for topk None", LLAMA, H100, None, None, False,
     "fa3", "utils/common.py, is_no_spec_infer_or_topk_one"),
    ("--seed 1 --fuzz-case 262: topk 1, page 128 on SM100", LLAMA, B200, 1, 128, False, "flashinfer",
     "is_no_spec_infer_or_topk_one: topk 1 counts only at page size 1"),
    ("topk 1, page 16 on Hopper", LLAMA, H100, 1, 16, False, "flashinfer", "is_no_spec_infer_or_topk_one"),
    ("--seed 1 --fuzz-case 26: asymmetric K/V rows, topk 1 on SM100", QWEN3_ASYM, B200, 1, None, False, "fa4",
     "get_default_attn_backend: `if model_config.has_asymmetric_kv: return 'fa4'`"),
    ("asymmetric K/V rows, topk 1 on Hopper", QWEN3_ASYM, H100, 1, None, False, "fa3",
     "get_default_attn_backend"),
    ("--seed 3 --fuzz-case 18: Kimi K2 on SM100, prefill fa3 / decode trtllm_mla given", KIMI, B200,
     None, None, True, "flashinfer",
     "model_overrides/deepseek_v2.py: trtllm_mla only with all three backends unset"),
    ("--seed 3 --fuzz-case 2226: DeepSeek-V3.2 on SM120, a split given", DSV32, RTX_PRO, 1, None, True,
     "triton",      "deepseek_v2.py: dsa only when is_attention_backend_not_set"),
    ("GPT-OSS on Hopper, a split given", GPT_OSS, H100, 4, None, True, "triton",
     "model_overrides/gpt_oss.py: is_attention_backend_not_set; then the generic default (sinks: triton)"),
    ("Qwen3-Next on SM100, all unset", QWEN3_NEXT, B200, None, None, False, "triton",
     "model_overrides/qwen3_5.py: get_default_attn_backend says flashinfer (topk unset), so triton"),
]


@pytest.mark.parametrize("line,config,gpu,topk,page,split,sglang,source", BACKEND_CASES,
                         ids=[c[0][:60] for c in BACKEND_CASES])
def test_sglang_default_backend_as_sglang_picks_it(line, config, gpu, topk, page, split, sglang, source):
    facts = facts_from_config(config, "config.json")
    got = sglang_default_backend(facts, gpu, topk, page, split)
    assert got == sglang, f"{line}: SGLang 0.5.23 picks {sglang} ({source})"


def test_asymmetric_kv_is_read_from_config_json_as_sglang_reads_it():
    # configs/model_config.py, ModelConfig.__init__ and has_asymmetric_kv: head_dim (default
    # hidden_size // num_attention_heads) against v_head_dim (None or 0: head_dim), and the SWA pair
    assert facts_from_config(QWEN3_ASYM, "c").asymmetric_kv
    assert not facts_from_config({**QWEN3_ASYM, "v_head_dim": 0}, "c").asymmetric_kv
    assert not facts_from_config({**LLAMA, "v_head_dim": 64}, "c").asymmetric_kv  # 256 // 4
    assert facts_from_config({**LLAMA, "swa_v_head_dim": 32}, "c").asymmetric_kv
    assert not facts_from_config({**KIMI, "v_head_dim": 32}, "c").asymmetric_kv  # MLA: rewritten


# (fuzz line, config.json, GPU, topk, page size as given, SGLang's resolved page_size; the source)
PAGE_CASES = [
    ("--seed 2 --fuzz-case 206: Qwen3-Next, page 16 given, no backend, SM100, topk 1", QWEN3_NEXT,
     B200, 1, 16, 1,
     "model_overrides/qwen3_5.py: no chain at page size 16 (get_default_attn_backend: flashinfer), so "
     "triton with page size 1, over the one given"),
    ("Qwen3-Next, no page size, no backend, SM100, topk 1", QWEN3_NEXT, B200, 1, None, 64,
     "qwen3_5.py: a chain, so trtllm_mha with page size 64"),
    ("--seed 2 --fuzz-case 340: Qwen3-Next, page 32 given, no backend, SM100, topk 2", QWEN3_NEXT,
     B200, 2, 32, 1, "qwen3_5.py: triton with page size 1, over the one given"),
    ("Qwen3-Next on Hopper keeps the page size given", QWEN3_NEXT, H100, 2, 32, 32, "qwen3_5.py: SM100 only"),
    ("Llama keeps the page size given", LLAMA, B200, 2, 16, 16, "no model override"),
]


@pytest.mark.parametrize("line,config,gpu,topk,page,sglang,source", PAGE_CASES,
                         ids=[c[0][:60] for c in PAGE_CASES])
def test_sglang_default_page_size_as_sglang_sets_it(line, config, gpu, topk, page, sglang, source):
    got = sglang_default_page_size(facts_from_config(config, "c"), gpu, topk, page)
    assert got == sglang, f"{line}: SGLang 0.5.23 runs page size {sglang} ({source})"


@pytest.mark.parametrize("topk,page", [(1, 1), (None, 1), (1, 64), (2, 1)])
def test_fa4_on_sm100_runs_page_size_128_for_chains(topk, page):
    # --seed 2 --fuzz-case 382 and 1280: overrides.py, _fa4_page_constraint: fa4 (any role) for a
    # non-MLA model on SM100 with `(speculative_eagle_topk or 0) <= 1` -> page size 128
    ctx = ServerContext(attention_backend="fa4", page_size=page, target_attention="mha", gpu=B200)
    assert resolved_page_size(ctx, topk) == (page if topk == 2 else 128)
    hopper = ServerContext(attention_backend="fa4", target_attention="mha", gpu=H100)
    assert resolved_page_size(hopper, 1) == 1


@pytest.mark.parametrize("gpu,refused", [(A100, True), (L40S, True), (H100, False), (B200, False),
                                         (THOR, True), (RTX_PRO, False)])
def test_trtllm_mha_runs_on_sm90_sm100_and_sm120_only(gpu, refused):
    # --seed 1 --fuzz-case 25 and 183: arg_groups/attention_hook.py, handle_attention_backend_compatibility:
    # trtllm_mha as the prefill or decode backend needs is_sm90, is_sm100 or is_sm120, else ValueError
    # ("TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell (SM100) and (SM120)
    # GPUs. ..."), during argument handling, the baseline's too
    refusal = gpu_refusal("trtllm_mha", gpu, "mha")
    assert (refusal is not None) == refused
    assert refusal is None or refusal.startswith("ValueError: TRTLLM MHA backend")


# (fuzz line, requested, server arguments, SGLang's verdict: its exception during argument handling or
#  the resolved draft tokens, the source)
FA4_CASES = [
    ("--seed 3 --fuzz-case 2857: all unset on fa4 on SM100 (Llama: auto choice 5, 4, 8)",
     S(), dict(attention_backend="fa4", target_attention="mha", target_architecture="LlamaForCausalLM",
               gpu=B200), "ValueError",
     "overrides.py, _fa4_page_constraint (topk as given: None) sets page size 128; speculative_hook.py then "
     "refuses the auto-chosen topk 4 at page size 128 on fa4"),
    ("the same at topk 4 as given: fa4 keeps page size 1 for trees",
     S(5, 4, 8), dict(attention_backend="fa4", target_attention="mha", gpu=B200), 8,
     "overrides.py, _fa4_page_constraint: `(speculative_eagle_topk or 0) <= 1`"),
]


@pytest.mark.parametrize("line,spec,args,sglang,source", FA4_CASES, ids=[c[0][:60] for c in FA4_CASES])
def test_fa4_page_size_decides_as_in_sglang(line, spec, args, sglang, source):
    res = resolve(spec, ServerContext(**args))
    got = res.violation.sglang_exception if res.violation is not None and res.violation.at_launch else \
        res.effective.num_draft_tokens
    assert got == sglang, f"{line}: SGLang 0.5.23 says {sglang!r} ({source})"
