"""A model's attention kind is judged of the architecture and text config SGLang 0.5.23's config
parser makes of its ``config.json`` (hf_transformers/config.py, ``HfModelConfigParser.parse``;
common.py, ``get_hf_text_config``), not of the file's own ``architectures`` and ``text_config``.

QA (qa193): DeepSeek-VL2 (``model_type: deepseek_vl_v2``, no ``architectures`` in its config.json,
the text model in ``language_config``) was read as MHA of no architecture, where SGLang names it
``DeepseekVL2ForCausalLM`` and runs deepseek-vl2 and -small MLA (so the tuner took SGLang's
default backend to be flashinfer, where SGLang picks triton on Ampere and fa3 on Hopper); LongCat's
``LongcatCausalLM`` and ``LongcatFlashNgramForCausalLM``, which SGLang loads as
``LongcatFlashForCausalLM`` (MLA), were MHA too.
"""

from __future__ import annotations

import json

import pytest

from tuner.sglang.attention import sglang_default_backend
from tuner.sglang.hardware import GpuArch
from tuner.sglang.model import facts_from_config, read_model_facts

A100, H100 = GpuArch(8, 0), GpuArch(9, 0)


def vl2(use_mla: bool, **extra) -> dict:
    """The shape of deepseek-ai/deepseek-vl2{,-small,-tiny}'s config.json (values trimmed)."""
    return {"model_type": "deepseek_vl_v2", "tile_tag": "2D", "global_view_pos": "head",
            "language_config": {"model_type": "deepseek_v2", "num_attention_heads": 16,
                                "kv_lora_rank": 512 if use_mla else None, "use_mla": use_mla},
            "vision_config": {"model_type": "vision"}, "projector_config": {"model_type": "mlp_projector"},
            **extra}


@pytest.mark.parametrize("config, arch, kind", [
    (vl2(True), "DeepseekVL2ForCausalLM", "mla"),  # deepseek-vl2, deepseek-vl2-small
    (vl2(False), "DeepseekVL2ForCausalLM", "mha"),  # deepseek-vl2-tiny
    # DeepSeek-OCR: a deepseek_vl_v2 config whose auto_map names the OCR model
    (vl2(False, architectures=["DeepseekOCRForCausalLM"],
         auto_map={"AutoModel": "modeling_deepseekocr.DeepseekOCRForCausalLM"}), "DeepseekOCRForCausalLM", "mha"),
    ({"architectures": ["LongcatCausalLM"], "kv_lora_rank": 512}, "LongcatFlashForCausalLM", "mla"),
    ({"architectures": ["LongcatFlashNgramForCausalLM"], "kv_lora_rank": 512}, "LongcatFlashForCausalLM", "mla"),
    # Untouched by the parser: the file's own
    ({"architectures": ["Qwen2ForCausalLM"], "model_type": "qwen2"}, "Qwen2ForCausalLM", "mha"),
])
def test_the_architecture_and_kind_are_sglang_s(tmp_path, config, arch, kind):
    (tmp_path / "config.json").write_text(json.dumps(config))
    facts = read_model_facts(str(tmp_path))
    assert (facts.architecture, facts.attention) == (arch, kind)


@pytest.mark.parametrize("gpu, mla_backend, mha_backend", [(A100, "triton", "flashinfer"),
                                                             (H100, "fa3", "flashinfer")])
def test_deepseek_vl2_gets_sglang_s_mla_default_backend(gpu, mla_backend, mha_backend):
    # model_override_base.py, get_default_attn_backend with an EAGLE topk of 4: MLA models get fa3 on
    # Hopper and triton on Ampere, MHA ones flashinfer (the backend the tuner pinned for deepseek-vl2).
    assert sglang_default_backend(facts_from_config(vl2(True), "vl2"), gpu, 4) == mla_backend
    assert sglang_default_backend(facts_from_config(vl2(False), "vl2-tiny"), gpu, 4) == mha_backend


@pytest.mark.parametrize("key", ["language_config", "llm_config", "thinker_config"])
def test_the_text_config_is_the_one_sglang_reads(key):
    # get_hf_text_config: thinker_config (its text_config) > llm_config > language_config > text_config
    inner = {"learnable_sink": True, "num_attention_heads": 8}
    sub = {"text_config": inner} if key == "thinker_config" else inner
    config = {"architectures": ["SomeVLForConditionalGeneration"], key: sub,
              "text_config": {"learnable_sink": False, "num_attention_heads": 8}}
    assert facts_from_config(config, "c").attention_sinks
