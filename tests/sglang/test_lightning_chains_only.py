"""Ling/Ring 2.5 (BailingMoeV2_5ForCausalLM) verify chains only. Its linear-attention layers
(``models/bailing_moe_linear.py``, ``BailingMoELinearAttention``) run SGLang 0.5.23's Lightning (seg_la)
backend (``attention_registry.py`` line 549, ``configs/hybrid_arch.py`` ``hybrid_lightning_config``: a
``bailing_hybrid`` config without ``short_conv_kernel_size``), whose ``__init__`` raises
NotImplementedError for any topk > 1 as the target's model runner starts (``lightning_backend.py`` line
88), whatever the attention backend; argument handling takes the tree.

QA (qa208, qa209): the tuner took the model for a plain MLA model, pinned fa3 on Hopper "chains and trees
alike" and searched trees, each of which SGLang kills after the full model load; the simulator served
them."""

from __future__ import annotations

import json

import pytest
import requests
import yaml
from support.simproc import running_sim

from tuner.config.study import load_study
from tuner.engine.study import create_study
from tuner.sglang.attention import choose_attention_backend
from tuner.sglang.hardware import GpuArch
from tuner.sglang.model import facts_from_config
from tuner.sglang.rules import STAGE_STARTUP, ServerContext, SpecConfig, resolve
from tuner.sim.profile import PROFILES_DIR

ARCH = "BailingMoeV2_5ForCausalLM"
#: lightning_backend.py line 88, word for word (topk 4)
SAYS = ("NotImplementedError: Lightning (seg_la) linear-attention backend does not support speculative decoding "
        "with topk > 1 (got topk=4); seg_la verifies a draft tree as a chain. Use --speculative-eagle-topk 1.")
#: a Ling-2.5-style config.json: bailing_hybrid, MLA full-attention layers, lightning linear layers
CONFIG = {"architectures": [ARCH], "model_type": "bailing_hybrid", "layer_group_size": 8, "kv_lora_rank": 512,
          "q_lora_rank": 1536, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128,
          "head_dim": 192, "num_attention_heads": 64, "num_key_value_heads": 64}


def _ctx(arch: str = ARCH, **backends) -> ServerContext:
    return ServerContext(speculative_algorithm="EAGLE3", target_architecture=arch, target_attention="mla",
                         draft_attention="mha", **backends)


@pytest.mark.parametrize("backends", [{"attention_backend": "fa3"}, {"attention_backend": "triton"},
                                      {"attention_backend": "flashinfer"}, {}])
@pytest.mark.parametrize("spec", [SpecConfig(3, 4, 8), SpecConfig(2, 4, 8), SpecConfig(1, 4, 5)])
def test_a_tree_dies_as_the_target_runner_starts(backends, spec):
    v = resolve(spec, _ctx(**backends)).violation
    assert v is not None and v.rule == "lightning-tree", v
    assert (v.stage, f"{v.sglang_exception}: {v.sglang_message}") == (STAGE_STARTUP, SAYS)
    assert "topk 1" in v.message and ARCH in v.message


def test_chains_run_and_other_mla_models_keep_trees():
    assert resolve(SpecConfig(3, 1, 4), _ctx(attention_backend="fa3")).ok
    assert resolve(SpecConfig(3, 4, 8), _ctx("DeepseekV3ForCausalLM", attention_backend="fa3")).ok


@pytest.mark.parametrize("gpu", ["8.0", "9.0", "10.0", None])
def test_the_pin_searches_chains_only(gpu):
    facts = facts_from_config(CONFIG, "config.json")
    choice = choose_attention_backend(facts, GpuArch.parse(gpu) if gpu else None, None, 1)
    assert choice.trees is False and "Lightning" in choice.reason, choice
    own = choose_attention_backend(facts, GpuArch.parse("9.0"), "triton", 1)
    assert own.trees is False and "no trees" in own.reason, own


def test_a_study_searches_chains_only(tmp_path):
    model, draft = tmp_path / "model", tmp_path / "draft"
    model.mkdir()
    draft.mkdir()
    (model / "config.json").write_text(json.dumps(CONFIG))
    (draft / "config.json").write_text(json.dumps({"architectures": ["LlamaForCausalLMEagle3"]}))
    path = tmp_path / "s.yaml"
    path.write_text(f"""
name: s
search_space: eagle3
server: {{backend: sglang, model_path: {model}, draft_model_path: {draft}, tp_size: 1,
          facts: {{gpu_compute_capability: "9.0"}}}}
bench: {{suite: quick}}
budget: {{n_trials: 4}}
""")
    config = load_study(path)
    said: list[str] = []
    create_study(config, config.storage, note=said.append)
    assert any(line.startswith("search space without trees:") and "Lightning" in line for line in said), said


def test_the_simulator_dies_before_its_port_opens(tmp_path):
    data = yaml.safe_load((PROFILES_DIR / "k2.6-tp8-pcie.yaml").read_text())
    data["model"]["architecture"] = ARCH
    profile = tmp_path / "ling-2.5.yaml"
    profile.write_text(yaml.safe_dump(data))
    args = ["--sim-profile", str(profile), "--sim-load-seconds", "0.3", "--tp-size", "8",
            "--attention-backend", "fa3", "--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3",
            "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "8"]
    with running_sim(*args, speedup=200.0, ready=False) as sim:
        with pytest.raises(requests.ConnectionError):
            requests.get(sim.url + "/health_generate", timeout=10)
        assert sim.wait(15) == 1
        log = sim.log
    assert 'lightning_backend.py", in __init__' in log and SAYS in log, log[-2000:]
    assert log.index("Load weight end") < log.index(SAYS)
    assert "HTTP server listening on" not in log and "The server is fired up" not in log
