"""A draft tree verified on FA3 for a model with a sliding window (GPT-OSS, Gemma 2/3, Llama 4,
Granite SWA) runs at page size 1 only. SGLang 0.5.23 takes it during argument handling (fa3 is one of
``speculative_hook.py``'s ``_PAGE_TREE_SPEC_BACKENDS``), then ``layers/attention/flashattention_backend.py``
builds the sliding-window metadata of every topk > 1 target verify (line 1177 eager, line 3277 CUDA-graph
replay) and asserts ``page_size == 1`` there (line 3417, ``_init_sliding_window_attn_spec_metadata``):
the server dies at its first verify, SGLang's warmup request, after the full model load. The window is
the model runner's (``load_model_utils.py``, ``resolve_sliding_window_size``: ``gpt_oss.py`` gives
``config.sliding_window - 1``).

QA (qa208): a GPT-OSS study on Hopper with ``page_size: 16`` pinned fa3 "runs trees", and its dry run
launched the seeds steps=4 topk=8, steps=2 topk=4 and steps=5 topk=8 on fa3 at page size 16, each of
which SGLang's assert kills; the simulator served them."""

from __future__ import annotations

import json
import logging

import pytest
import yaml

from tuner.config.study import load_study
from tuner.engine.study import create_study
from tuner.sglang.attention import choose_attention_backend
from tuner.sglang.hardware import GpuArch
from tuner.sglang.model import facts_from_config
from tuner.sglang.rules import STAGE_STARTUP, ServerContext, SpecConfig, resolve
from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import PROFILES_DIR, Profile

H100 = GpuArch(9, 0)
#: SGLang's assert (flashattention_backend.py line 3417), word for word: the oracle
SAYS = "FlashAttention backend doesn't support topk > 1 speculative decoding with page size > 1 sliding window attention"
TREE = SpecConfig(2, 2, 4)


def _ctx(arch: str, page_size: int, **backends) -> ServerContext:
    return ServerContext(page_size=page_size, target_attention="mha", draft_attention="mha",
                         target_architecture=arch, **({"attention_backend": "fa3"} | backends))


@pytest.mark.parametrize("arch", ["GptOssForCausalLM", "Gemma3ForCausalLM", "Gemma2ForCausalLM",
                                  "Llama4ForConditionalGeneration", "GraniteSWAForCausalLM"])
@pytest.mark.parametrize("backends", [{}, {"prefill_attention_backend": "fa3", "decode_attention_backend": "fa3"},
                                      # the verify runs on the prefill half of a split (hybrid_attn_backend.py)
                                      {"attention_backend": None, "prefill_attention_backend": "fa3",
                                       "decode_attention_backend": "triton"}])
def test_a_tree_on_fa3_at_a_page_size_above_1_dies_at_the_first_verify(arch, backends):
    v = resolve(TREE, _ctx(arch, 16, **backends)).violation
    assert v is not None and v.rule == "swa-tree-page-size", v
    assert (v.sglang_exception, v.sglang_message, v.stage) == ("AssertionError", SAYS, STAGE_STARTUP)
    assert "page size 1" in v.message and arch in v.message


@pytest.mark.parametrize("arch,page_size,spec,backends", [
    ("GptOssForCausalLM", 1, TREE, {}),  # page size 1: the assert holds
    ("GptOssForCausalLM", 16, SpecConfig(3, 1, 4), {}),  # a chain: no tree metadata
    ("GptOssForCausalLM", 16, TREE, {"attention_backend": "triton"}),  # not FlashAttentionBackend
    ("LlamaForCausalLM", 16, TREE, {}),  # no sliding window
    ("MistralForCausalLM", 16, TREE, {}),  # config.sliding_window, but no window in SGLang's runner
    ("Qwen3ForCausalLM", 64, SpecConfig(3, 4, 8), {}),
])
def test_what_the_assert_does_not_reach_still_runs(arch, page_size, spec, backends):
    assert resolve(spec, _ctx(arch, page_size, **backends)).ok


def test_the_pin_at_a_page_size_above_1_runs_trees():
    # GPT-OSS on Hopper: SGLang's own fa3 (gpt_oss.py) runs no tree at page size 16, and model_hook.py
    # refuses flashinfer for it: triton. Gemma 3 at page size 16: SGLang's own flashinfer.
    gpt_oss = facts_from_config({"architectures": ["GptOssForCausalLM"], "sliding_window": 128}, "c")
    gemma3 = facts_from_config({"architectures": ["Gemma3ForCausalLM"], "sliding_window": 512}, "c")
    for facts, backend in ((gpt_oss, "triton"), (gemma3, "flashinfer")):
        choice = choose_attention_backend(facts, H100, None, 16)
        assert (choice.backend, choice.trees) == (backend, True), choice
        assert resolve(SpecConfig(3, 4, 8), _ctx(facts.architecture, 16, attention_backend=choice.backend)).ok
        assert choose_attention_backend(facts, H100, None, 1).backend == "fa3"
    own = choose_attention_backend(gpt_oss, H100, "fa3", 16)
    assert own.trees is False and "sliding window at page size 16" in own.reason, own


def _study(tmp_path, args: str):
    model, draft = tmp_path / "model", tmp_path / "draft"
    for folder, arch in ((model, "GptOssForCausalLM"), (draft, "LlamaForCausalLMEagle3")):
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps({"architectures": [arch], "sliding_window": 128}))
    path = tmp_path / "s.yaml"
    path.write_text(f"""
name: s
search_space: eagle3
server: {{backend: sglang, model_path: {model}, draft_model_path: {draft}, tp_size: 1,
          facts: {{gpu_compute_capability: "9.0"}}, args: {{{args}}}}}
bench: {{suite: quick}}
budget: {{n_trials: 4}}
""")
    return load_study(path)


def test_a_study_on_fa3_at_page_size_16_searches_chains_only(tmp_path):
    said: list[str] = []
    config = _study(tmp_path, "attention_backend: fa3, page_size: 16")
    create_study(config, config.storage, note=said.append)
    assert any(line.startswith("search space without trees: attention backend fa3 runs topk 1 only")
               for line in said), said


def _plan(capability: str, *flags: str):
    data = yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text())
    data["model"]["architecture"] = "GptOssForCausalLM"
    data["hardware"]["compute_capability"] = capability
    ns = parse_args(["--model-path", "m", "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path",
                     "d", "--speculative-num-steps", "2", "--speculative-eagle-topk", "2",
                     "--speculative-num-draft-tokens", "4", *flags])
    return resolve_launch(ns, logging.getLogger("swa-tree"), Profile(**data))


def test_the_simulator_dies_after_the_load_as_sglang_does():
    v = _plan("9.0", "--attention-backend", "fa3", "--page-size", "16").startup_violation
    assert v is not None and (v.sglang_exception, v.sglang_message) == ("AssertionError", SAYS), v
    assert _plan("9.0", "--attention-backend", "fa3", "--page-size", "1").startup_violation is None
