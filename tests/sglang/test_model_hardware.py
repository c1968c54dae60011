"""Model facts from config.json (SGLang's MLA judge, model_config.py), GPU generations, and the
attention backend a study pins (tuner/sglang/attention.py, mirroring get_default_attn_backend)."""

import json
import os

import pytest

from tuner.sglang.attention import choose_attention_backend, gpu_refusal, runs_trees, sglang_default_backend
from tuner.sglang.hardware import GpuArch
from tuner.sglang.model import ModelFacts, facts_from_config, find_config_json, read_model_facts

# config.json shapes of the models the tuner targets (keys SGLang reads; values trimmed)
KIMI_K26 = {"architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25",
            "text_config": {"architectures": ["DeepseekV3ForCausalLM"], "kv_lora_rank": 512}}
KIMI_K2 = {"architectures": ["DeepseekV3ForCausalLM"], "kv_lora_rank": 512, "q_lora_rank": 1536}
DEEPSEEK_V32 = {"architectures": ["DeepseekV32ForCausalLM"], "kv_lora_rank": 512, "index_topk": 2048}
QWEN = {"architectures": ["Qwen3ForCausalLM"], "num_key_value_heads": 8}
LLAMA_EAGLE3 = {"architectures": ["LlamaForCausalLMEagle3"], "num_key_value_heads": 8}
MLA_EAGLE3 = {"architectures": ["Eagle3DeepseekV2ForCausalLM"], "kv_lora_rank": 512}
PIXTRAL_MHA = {"architectures": ["PixtralForConditionalGeneration"], "text_config": {}}


@pytest.mark.parametrize("config,attention,dsa", [
    (KIMI_K26, "mla", False), (KIMI_K2, "mla", False), (DEEPSEEK_V32, "mla", True), (QWEN, "mha", False),
    (LLAMA_EAGLE3, "mha", False), (MLA_EAGLE3, "mla", False), (PIXTRAL_MHA, "mha", False),
    # kv_lora_rank alone does not make SGLang use MLA: the architecture list decides
    ({"architectures": ["SomeNewForCausalLM"], "kv_lora_rank": 512}, "mha", False),
])
def test_mla_judge_follows_sglangs_architecture_list(config, attention, dsa):
    facts = facts_from_config(config, "x")
    assert (facts.attention, facts.dsa) == (attention, dsa)
    assert facts.architecture == config["architectures"][0]


def test_config_json_from_a_folder_and_from_the_hf_cache(tmp_path, monkeypatch):
    local = tmp_path / "k26"
    local.mkdir()
    (local / "config.json").write_text(json.dumps(KIMI_K26))
    assert read_model_facts(str(local)).mla
    cache = tmp_path / "hub"
    snap = cache / "models--moonshotai--Kimi-K2.6" / "snapshots" / "abc123"
    snap.mkdir(parents=True)
    (snap / "config.json").write_text(json.dumps(KIMI_K26))
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    facts = read_model_facts("moonshotai/Kimi-K2.6")
    assert facts.mla and facts.source == str(snap / "config.json")
    assert read_model_facts("moonshotai/Other") is None  # never downloads: absent is None
    assert find_config_json(str(tmp_path / "missing")) is None


def test_a_model_path_this_user_cannot_look_into_is_not_found_here(tmp_path):
    """pathlib's is_dir raises for a path it cannot stat (EACCES: a folder of another user; a name too
    long): the facts are then unknown here (None), as the module promises, not an OSError traceback
    (QA: export of a study an older tuner made, run by a user who may not enter the model folder)."""
    too_long = tmp_path / ("m" * 300)  # ENAMETOOLONG, reproducible as root too
    assert find_config_json(str(too_long)) is None and read_model_facts(str(too_long)) is None
    if os.geteuid() != 0:  # root enters any folder
        closed = tmp_path / "closed"
        (closed / "model").mkdir(parents=True)
        (closed / "model" / "config.json").write_text(json.dumps(KIMI_K26))
        closed.chmod(0o700 & ~0o100)
        try:
            assert read_model_facts(str(closed / "model")) is None
        finally:
            closed.chmod(0o700)


def test_unreadable_config_names_the_file(tmp_path):
    (tmp_path / "config.json").write_text("{not json")
    with pytest.raises(ValueError, match="config.json"):
        read_model_facts(str(tmp_path))


@pytest.mark.parametrize("text,sm,hopper,sm100", [
    ("9.0", 90, True, False), ("sm90", 90, True, False), ("10.0", 100, False, True), ("sm_100", 100, False, True),
    ("12.0", 120, False, False), ("8.9", 89, False, False)])
def test_gpu_generation(text, sm, hopper, sm100):
    g = GpuArch.parse(text)
    assert (g.sm, g.is_hopper, g.is_sm100) == (sm, hopper, sm100)


def test_gpu_generation_rejects_nonsense():
    with pytest.raises(ValueError, match="compute capability"):
        GpuArch.parse("hopper")


MLA, MHA = facts_from_config(KIMI_K26, "k"), facts_from_config(QWEN, "q")
HOPPER, B200, A100 = GpuArch(9, 0), GpuArch(10, 0), GpuArch(8, 0)


@pytest.mark.parametrize("target,gpu,topk,backend", [
    # get_default_attn_backend (model_override_base.py) and deepseek_v2.py's SM100 override
    (MLA, HOPPER, 1, "fa3"), (MLA, HOPPER, 4, "fa3"), (MLA, B200, 4, "trtllm_mla"), (MLA, A100, 4, "triton"),
    (facts_from_config(MLA_EAGLE3, "d"), B200, 1, "flashinfer"),
    (MHA, HOPPER, 1, "fa3"), (MHA, HOPPER, 4, "flashinfer"), (MHA, B200, 1, "trtllm_mha"),
    (MHA, B200, 4, "flashinfer"), (MHA, A100, 1, "flashinfer"),
    (facts_from_config(DEEPSEEK_V32, "v"), HOPPER, 4, "dsa"),
])
def test_sglangs_own_choice(target, gpu, topk, backend):
    assert sglang_default_backend(target, gpu, topk) == backend


def test_tree_capability():
    assert runs_trees("flashinfer", MLA) is False and runs_trees("fa3", MLA) is True
    assert runs_trees("triton", MLA, page_size=16) is False
    assert runs_trees("flashinfer", MHA) is True and runs_trees("trtllm_mha", MHA) is False
    assert runs_trees("flashinfer", None) is None


@pytest.mark.parametrize("target,gpu,user,backend,pinned,trees", [
    (MLA, HOPPER, None, "fa3", True, True),           # SGLang's own choice runs trees: pinned
    (MLA, B200, None, "triton", True, True),          # trtllm_mla drafts chains only: triton runs trees
    (MLA, A100, None, "triton", True, True),
    (MHA, HOPPER, None, "fa3", True, True),           # FA3 for chains (SGLang switches to flashinfer for trees)
    (MHA, B200, None, "flashinfer", True, True),      # trtllm_mha refuses trees
    (MLA, None, None, "triton", True, True),          # GPU unknown
    (None, HOPPER, None, "flashinfer", True, None),   # model unknown: as before, and said so
    (MLA, HOPPER, "flashinfer", "flashinfer", False, False),  # the study's own: trees go from the space
    (MLA, HOPPER, "fa3", "fa3", False, True),
    # DSA (DeepSeek V3.2): SGLang's dsa, with its page size set to 64 (deepseek_v2.py), which
    # speculative_hook.py refuses for topk > 1 outside flashinfer, fa3 and triton
    (facts_from_config(DEEPSEEK_V32, "v"), HOPPER, None, "dsa", True, False),
    (facts_from_config(DEEPSEEK_V32, "v"), B200, None, "dsa", True, False),
])
def test_choice(target, gpu, user, backend, pinned, trees):
    c = choose_attention_backend(target, gpu, user)
    assert (c.backend, c.pinned, c.trees) == (backend, pinned, trees)
    assert c.reason and backend in c.line()


def test_choice_explains_the_fallback():
    line = choose_attention_backend(MLA, B200).line()
    assert "trtllm_mla" in line and "chains only" not in line.split(":")[0]
    # the advice to run chains on trtllm_mla names the draft backend an MHA EAGLE-3 head needs
    assert "speculative_draft_attention_backend" in line and "MHA draft head" in line
    assert "and speculative_draft_attention_backend: flashinfer in" in choose_attention_backend(
        MLA, B200, draft=MHA).line()
    assert "speculative_draft_attention_backend" not in choose_attention_backend(MLA, B200, draft=MLA).line()
    assert "chains only" in choose_attention_backend(MLA, HOPPER, "flashinfer").line()
    assert isinstance(MLA, ModelFacts)


@pytest.mark.parametrize("backend, gpu, attention, refused", [
    ("fa3", B200, "mla", True),      # attention_registry.py: SM 8.x (non-MLA) or 9.x only
    ("fa3", B200, "mha", True),
    ("fa3", A100, "mla", True),
    ("fa3", A100, "mha", False),
    ("fa3", A100, None, False),      # the model not known: not judged
    ("fa3", HOPPER, "mla", False),
    ("fa3", None, "mla", False),     # the GPU not known: not judged
    ("flashinfer", B200, "mla", False),
    ("triton", B200, "mha", False),
    ("trtllm_mla", HOPPER, "mla", True),   # overrides.py: Blackwell only (SM100/SM12x)
    ("trtllm_mla", B200, "mla", False),
    ("trtllm_mla", GpuArch(12, 0), "mla", False),
    ("trtllm_mla", GpuArch(11, 0), "mla", False),  # QA: is_blackwell covers SM 11.x (Thor) too
    ("cutedsl_mla", GpuArch(12, 0), "mla", True),  # SM100 only
    ("cutedsl_mla", B200, "mla", False),
])
def test_gpu_refusal(backend, gpu, attention, refused):
    says = gpu_refusal(backend, gpu, attention)
    assert (says is not None) is refused
    assert says is None or "requires SM>=80 and SM<=90" in says or "only supported on Blackwell GPUs" in says
