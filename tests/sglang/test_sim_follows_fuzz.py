"""The simulated server decides the fuzz's cases as SGLang 0.5.23 does (``test_fuzz_found_rules.py`` and
``test_fuzz_found_backends.py`` hold the rules; this is the simulator on them), each as a real
``python -m tuner.sim`` process: a
launch SGLang refuses during argument handling exits 1 with SGLang's exception before any loading,
and one SGLang takes starts."""

from __future__ import annotations

from pathlib import Path

import requests
import yaml
from support.simproc import running_sim

from tuner.sim.profile import PROFILES_DIR

# generous: a loaded 2-core machine starts a Python process slowly
START_S = 60.0


def _spec(steps=None, topk=None, draft=None) -> list[str]:
    flags = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "draft"]
    for name, value in (("--speculative-num-steps", steps), ("--speculative-eagle-topk", topk),
                        ("--speculative-num-draft-tokens", draft)):
        if value is not None:
            flags += [name, str(value)]
    return flags


def _refused(*args: str) -> str:
    """The log of a simulator that must exit 1 before it loads (the load delay would hold it)."""
    with running_sim(*args, "--sim-load-seconds", "600", ready=False, timeout_s=START_S) as sim:
        assert sim.wait(START_S) == 1, sim.log
        return sim.log


def test_flex_attention_refuses_speculation_at_launch():
    # --seed 1 --fuzz-case 11: arg_groups/attention_hook.py, handle_attention_backend_compatibility
    # asserts speculative_algorithm is None for flex_attention; SGLang's child: AssertionError
    log = _refused(*_spec(3, 1, 4), "--attention-backend", "flex_attention")
    says = "Speculative decoding is currently not supported with Flex Attention backend"
    assert f"AssertionError: {says}" in log


def test_rejection_sampling_without_topk_is_sglangs_value_error():
    # --seed 1 --fuzz-case 140: speculative_hook.py, _handle_eagle_family: rejection sampling's
    # `topk != 1` comes before `topk > 1`; SGLang's child: ValueError, not TypeError
    log = _refused(*_spec(2, None, 3), "--speculative-use-rejection-sampling")
    assert "ValueError: --speculative-use-rejection-sampling requires --speculative-eagle-topk=1." in log


def test_all_flags_unset_on_sm100_llama_starts_as_sglang_does(tmp_path: Path):
    # --seed 1 --fuzz-case 239: model_override_base.py, get_default_attn_backend: trtllm_mha on SM100
    # needs topk given, so with none SGLang picks flashinfer, then its automatic (5, 4, 8) for Llama
    # (speculative_hook.py, _auto_choose_speculative_params) runs. SGLang's child for a Llama config on
    # sm100 with no flag: accepted, attention_backend flashinfer, steps 5, topk 4, draft tokens 8, page 1.
    # The simulator had picked trtllm_mha, and (3, 1, 4): it did not give the rules the architecture.
    path = _profile(tmp_path, "LlamaForCausalLM", "10.0")
    with running_sim(*_spec(), "--sim-profile", str(path), timeout_s=START_S) as sim:
        info = requests.get(f"{sim.url}/server_info", timeout=30).json()
    sglang = {"attention_backend": "flashinfer", "speculative_num_steps": 5, "speculative_eagle_topk": 4,
              "speculative_num_draft_tokens": 8, "page_size": 1}
    assert {k: info.get(k) for k in sglang} == sglang


def _profile(tmp_path: Path, architecture: str, capability: str) -> Path:
    """The dense profile with another config.json architecture and GPU generation."""
    profile = yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text())
    profile["name"] = f"{architecture}-{capability}"
    profile["model"]["architecture"] = architecture
    profile["hardware"]["compute_capability"] = capability
    path = tmp_path / f"{profile['name']}.yaml"
    path.write_text(yaml.safe_dump(profile))
    return path


def test_trtllm_mha_off_sm90_sm100_sm120_is_refused_at_launch(tmp_path: Path):
    # --seed 1 --fuzz-case 25 and 183: arg_groups/attention_hook.py, handle_attention_backend_compatibility:
    # trtllm_mha as the prefill (checked first) or decode backend on an SM80 GPU, the baseline's too.
    # SGLang's child on sm80: "ValueError: TRTLLM MHA backend for prefill requires Hopper (SM90),
    # Blackwell (SM100), or SM120 GPUs. Please use a different prefill backend."
    a100 = _profile(tmp_path, "Qwen3ForCausalLM", "8.0")
    says = ("TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), or SM120 GPUs. "
            "Please use a different prefill backend.")
    for speculation in (_spec(3, 1, 4), []):
        log = _refused("--sim-profile", str(a100), "--attention-backend", "trtllm_mha", *speculation)
        assert f"ValueError: {says}" in log
    decode = ("TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell (SM100) and "
              "(SM120) GPUs. Please use a different decode backend.")
    log = _refused("--sim-profile", str(a100), "--prefill-attention-backend", "triton",
                   "--decode-attention-backend", "trtllm_mha")
    assert f"ValueError: {decode}" in log
