"""Models whose attention backend SGLang 0.5.23 decides per architecture, before or instead of its
generic default (``arg_groups/model_overrides/``, ``arg_groups/model_hook.py``), and what the tuner
pins for them. Each case was found by ``benchmarks/sglang_agreement.py`` (the model x GPU x topk
matrix) running SGLang's own argument handling on a config.json of the shape below."""

import pytest

from tuner.sglang.attention import choose_attention_backend, sglang_default_backend, sglang_default_page_size
from tuner.sglang.hardware import GpuArch
from tuner.sglang.model import facts_from_config
from tuner.sglang.rules import ServerContext, SpecConfig, resolve, resolved_page_size

A100, L40S, H100, B200, RTX_PRO = (GpuArch(8, 0), GpuArch(8, 9), GpuArch(9, 0), GpuArch(10, 0),
                                   GpuArch(12, 0))
GPUS = (A100, L40S, H100, B200, RTX_PRO, None)

# config.json shapes (the keys SGLang reads; values trimmed)
GPT_OSS = {"architectures": ["GptOssForCausalLM"], "model_type": "gpt_oss", "num_key_value_heads": 8,
           "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention"]}
LLAMA4 = {"architectures": ["Llama4ForConditionalGeneration"], "model_type": "llama4",
          "text_config": {"model_type": "llama4_text", "num_key_value_heads": 8}}
LLAMA4_TEXT = {"architectures": ["Llama4ForCausalLM"], "model_type": "llama4_text"}
LLAMA_EAGLE3 = facts_from_config({"architectures": ["LlamaForCausalLMEagle3"]}, "head")


@pytest.mark.parametrize("config", [GPT_OSS, LLAMA4, LLAMA4_TEXT])
@pytest.mark.parametrize("gpu,backend", [(A100, "triton"), (L40S, "triton"), (H100, "fa3"),
                                         (B200, "trtllm_mha"), (RTX_PRO, "triton")])
@pytest.mark.parametrize("topk", [1, 4])
def test_gpt_oss_and_llama4_get_their_own_backend_whatever_the_topk(config, gpu, backend, topk):
    # model_overrides/gpt_oss.py (_gpt_oss_overrides) and model_overrides/llama4.py
    # (_llama4_overrides): trtllm_mha on SM100, fa3 on SM90, triton on other CUDA GPUs, set before
    # get_default_attn_backend and without looking at the topk (the matrix saw flashinfer nowhere).
    assert sglang_default_backend(facts_from_config(config, "c"), gpu, topk) == backend


@pytest.mark.parametrize("config", [GPT_OSS, LLAMA4, LLAMA4_TEXT])
@pytest.mark.parametrize("gpu", GPUS)
def test_the_pinned_backend_is_one_sglang_takes_for_the_model(config, gpu):
    # model_hook.py, handle_model_specific_adjustments: "GptOssForCausalLM requires one of
    # ['triton', 'trtllm_mha', 'fa3', 'fa4', ...]" and "fa3, aiter, triton, ascend, trtllm_mha or
    # intel_xpu is required for Llama4 model" (AssertionError during argument handling): the tuner
    # pinned flashinfer on every GPU but Hopper, and SGLang refused every launch of the study.
    facts = facts_from_config(config, "c")
    choice = choose_attention_backend(facts, gpu, draft=LLAMA_EAGLE3)
    assert choice.backend in ("fa3", "triton") and choice.pinned and choice.trees is True
    for topk in (1, 4):
        spec = SpecConfig(3, topk, 4 if topk == 1 else 8)
        ctx = ServerContext(attention_backend=choice.backend, target_attention="mha", draft_attention="mha",
                            target_architecture=facts.architecture)
        assert resolve(spec, ctx).ok, (choice, topk)
    assert " MLA trees" not in choice.reason  # the fallback once said "triton runs MLA trees"


@pytest.mark.parametrize("config,arch", [(GPT_OSS, "GptOssForCausalLM"), (LLAMA4, "Llama4")])
@pytest.mark.parametrize("backends", [{"attention_backend": "flashinfer"},
                                      {"prefill_attention_backend": "flashinfer", "decode_attention_backend": "flashinfer"}])
def test_a_study_backend_the_model_refuses_is_refused_at_launch(config, arch, backends):
    facts = facts_from_config(config, "c")
    for spec in (SpecConfig(3, 1, 4), SpecConfig(3, 4, 8)):
        res = resolve(spec, ServerContext(target_attention="mha", draft_attention="mha",
                                          target_architecture=facts.architecture, **backends))
        if arch == "Llama4" and "attention_backend" not in backends:
            # model_hook.py checks Llama 4's attention_backend alone, which _llama4_overrides has set
            # (fa3/triton/trtllm_mha) while it was unset; _attention_backend_default (attention_hook.py)
            # then makes the equal prefill and decode backends it: SGLang 0.5.23 runs flashinfer
            # (benchmarks/sglang_agreement.py --fuzz found it; its child accepts, sm80 and sm90 alike)
            assert res.ok, res
            continue
        assert res.violation is not None and res.violation.at_launch, res
        assert res.violation.rule == "model-backend" and res.violation.sglang_exception == "AssertionError"
        assert arch in res.violation.sglang_message and "flashinfer" in res.violation.message
    ok = resolve(SpecConfig(3, 4, 8), ServerContext(attention_backend="triton", target_architecture=facts.architecture))
    assert ok.ok


QWEN3_NEXT = {"architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "num_key_value_heads": 2,
              "full_attention_interval": 4, "linear_num_value_heads": 32}
QWEN3_5_MOE = {"architectures": ["Qwen3_5MoeForConditionalGeneration"], "model_type": "qwen3_5_moe",
               "text_config": {"full_attention_interval": 4}}
DEEPSEEK_V32 = {"architectures": ["DeepseekV32ForCausalLM"], "kv_lora_rank": 512, "index_topk": 2048}


@pytest.mark.parametrize("config", [QWEN3_NEXT, QWEN3_5_MOE])
def test_qwen3_5_hybrids_on_sm100_draft_trees_on_triton(config):
    # model_overrides/qwen3_5.py (_qwen3_5_hybrid_overrides), SM100 only: trtllm_mha with page size 64
    # while get_default_attn_backend would pick trtllm_mha (topk 1), else triton with page size 1; the
    # matrix saw SGLang pick triton for a Qwen3-Next tree where the tuner said flashinfer.
    facts = facts_from_config(config, "c")
    assert sglang_default_backend(facts, B200, 1) == "trtllm_mha"
    assert sglang_default_backend(facts, B200, 4) == "triton"
    # page size 64 on trtllm_mha (qwen3_5.py; overrides.py snaps trtllm_mha's to 64 too), 1 on triton
    pages = [resolved_page_size(ServerContext(attention_backend=sglang_default_backend(facts, B200, k),
                                              page_size=sglang_default_page_size(facts, B200, k))) for k in (1, 4)]
    assert pages == [64, 1]
    # elsewhere the generic default (no override)
    assert [sglang_default_backend(facts, g, 4) for g in (A100, H100, RTX_PRO)] == ["flashinfer"] * 3
    choice = choose_attention_backend(facts, B200, draft=LLAMA_EAGLE3)
    assert (choice.backend, choice.trees) == ("triton", True)


def test_dsa_page_size_is_sglangs_64_on_every_gpu():
    # model_overrides/deepseek_v2.py: page_size = 64 * index_kpool on CUDA GPUs, whatever the backend
    facts = facts_from_config(DEEPSEEK_V32, "v")
    assert {sglang_default_page_size(facts, g, k) for g in (A100, H100, B200) for k in (1, 4)} == {64}


GRANITE_SWA = {"architectures": ["GraniteSWAForCausalLM"], "model_type": "granite", "num_key_value_heads": 8}
QWEN3_SINKS = {"architectures": ["Qwen3ForCausalLM"], "model_type": "qwen3", "learnable_sink": True}
MIMO_SINKS = {"architectures": ["MiMoV2FlashForCausalLM"], "add_swa_attention_sink_bias": True}


@pytest.mark.parametrize("config", [GRANITE_SWA, QWEN3_SINKS])
def test_attention_sinks_keep_the_model_off_flashinfer(config):
    # model_override_base.py, get_default_attn_backend: "FlashInfer does not support attention
    # sinks" -> triton where the generic default says flashinfer; sinks come from the architecture
    # (model_config.py SWA_SINK_ARCHS), MiMoV2's sink-bias flags, or learnable_sink
    # (ModelConfig._detect_attention_sinks). The tuner pinned flashinfer for such a model.
    facts = facts_from_config(config, "c")
    assert facts.attention_sinks
    assert [sglang_default_backend(facts, g, 4) for g in (A100, L40S, H100, B200, RTX_PRO)] == ["triton"] * 5
    assert (sglang_default_backend(facts, H100, 1), sglang_default_backend(facts, B200, 1)) == ("fa3", "trtllm_mha")
    for gpu in (A100, B200, None):
        assert choose_attention_backend(facts, gpu).backend == "triton", gpu
    # MiMoV2 has sinks only with its sink-bias flags (its SM100 backend is its own, fa4: mimo_v2.py)
    assert facts_from_config(MIMO_SINKS, "c").attention_sinks
    assert not facts_from_config({"architectures": ["MiMoV2FlashForCausalLM"]}, "c").attention_sinks
    assert not facts_from_config({"architectures": ["Qwen3ForCausalLM"]}, "c").attention_sinks


# Architectures with model-specific attention code in SGLang 0.5.23 that the tuner does not mirror:
# model_overrides/iquest_q1.py refuses any backend but fa3 and topk > 1 (ValueError at launch);
# model_hook.py refuses flashinfer for Olmo2 and Gemma 4 and triton for LFM2 (AssertionError).
IQUEST = {"architectures": ["IQuestQ1ForCausalLM"], "model_type": "iquest_q1"}
OLMO2 = {"architectures": ["Olmo2ForCausalLM"], "model_type": "olmo2"}
GEMMA4 = {"architectures": ["Gemma4ForCausalLM"], "model_type": "gemma4_text"}
LFM2 = {"architectures": ["Lfm2ForCausalLM"], "model_type": "lfm2"}


@pytest.mark.parametrize("config", [IQUEST, OLMO2, GEMMA4, LFM2])
@pytest.mark.parametrize("gpu", GPUS)
def test_an_architecture_sglang_decides_itself_is_not_pinned_and_drafts_chains(config, gpu):
    # The tuner pinned its generic choice (flashinfer, fa3 or triton) and kept trees: SGLang refused
    # every launch of IQuest Q1 off Hopper, of Olmo2/Gemma 4 on flashinfer, of LFM2 on triton, and
    # every IQuest tree. Now SGLang's own choice (no --attention-backend) with topk 1 only.
    facts = facts_from_config(config, "c")
    choice = choose_attention_backend(facts, gpu, draft=LLAMA_EAGLE3)
    assert (choice.backend, choice.pinned, choice.trees) == (None, False, False)
    assert facts.architecture in choice.reason and "server.args" in choice.reason
    assert "SGLang's own choice" in choice.line() and "chains only" in choice.line()
    # a backend the study sets itself is its own call: the tuner cannot tell whether it runs trees
    assert choose_attention_backend(facts, gpu, "fa3").trees is None


def test_an_architecture_sglang_has_no_special_code_for_runs_sglangs_generic_path():
    # No model override, no model_hook branch: get_default_attn_backend decides, and the tuner mirrors
    # it, trees in where that backend runs MHA trees (the documented rule for unknown architectures).
    facts = facts_from_config({"architectures": ["SomeNewForCausalLM"], "num_key_value_heads": 8}, "c")
    choice = choose_attention_backend(facts, H100)
    assert (choice.backend, choice.pinned, choice.trees) == ("fa3", True, True)


@pytest.mark.parametrize("config,backends,says", [
    # model_hook.py, handle_model_specific_adjustments (AssertionError during argument handling)
    (OLMO2, {"attention_backend": "flashinfer"}, "FlashInfer backend can significantly degrade"),
    (LFM2, {"attention_backend": "triton"}, "Lfm2ForCausalLM does not support triton attention backend"),
    (GEMMA4, {"attention_backend": "flashinfer"}, "Gemma4 only supports trtllm_mha, triton, fa4"),
    (GEMMA4, {"attention_backend": "fa3"}, "got prefill=fa3, decode=fa3"),
])
def test_a_study_backend_refused_by_sglangs_own_model_check(config, backends, says):
    facts = facts_from_config(config, "c")
    res = resolve(SpecConfig(3, 1, 4), ServerContext(target_architecture=facts.architecture, **backends))
    assert res.violation is not None and res.violation.at_launch and res.violation.rule == "model-backend"
    assert says in res.violation.sglang_message and "server.args" in res.violation.message
    assert resolve(SpecConfig(3, 1, 4), ServerContext(attention_backend="trtllm_mha",
                                                      target_architecture=facts.architecture)).ok
