"""fa3 on a GPU it does not run on passes SGLang 0.5.23's argument handling and fails as a model runner
builds it, after the model load (``attention_registry.py`` line 243, ``create_flashattention_v3_backend``:
SM 8.x for non-MLA models, SM 9.x); the simulator fails there too, with SGLang's words, before its
port opens. After the fa3 fp8_e5m2 fallback (triton) nothing fails.

QA (qa150): Kimi K2.6 on an SM120 profile with ``--attention-backend fa3`` started the simulator and
served. In-process for the launch plan (the unit under test); one real process for the start-up."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest
import yaml

from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import PROFILES_DIR, Profile

SPEC = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d", "--speculative-num-steps",
        "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
FA3_SAYS = "FlashAttention v3 Backend requires SM>=80 and SM<=90."


def _profile_data(name: str, capability: str) -> dict:
    data = yaml.safe_load((PROFILES_DIR / name).read_text())
    data["hardware"]["compute_capability"] = capability
    return data


def _plan(name: str, capability: str, *flags: str):
    ns = parse_args(["--model-path", "m", "--tp-size", "8", *flags])
    return resolve_launch(ns, logging.getLogger("fa3-gpu"), Profile(**_profile_data(name, capability)))


@pytest.mark.parametrize("name, capability, flags", [
    ("k2.6-tp8-pcie.yaml", "12.0", ["--attention-backend", "fa3"]),
    ("k2.6-tp8-pcie.yaml", "12.0", ["--attention-backend", "fa3", *SPEC]),
    ("k2.6-tp8-pcie.yaml", "8.0", ["--attention-backend", "fa3"]),  # MLA: SM 9.x only
    ("dense-27b-tp1.yaml", "10.0", ["--decode-attention-backend", "fa3", "--prefill-attention-backend", "triton"]),
    ("dense-27b-tp1.yaml", "10.0", ["--attention-backend", "triton", "--speculative-draft-attention-backend", "fa3",
                                    *SPEC]),
])
def test_fa3_off_its_gpus_fails_as_the_runner_starts(name, capability, flags):
    v = _plan(name, capability, *flags).startup_violation
    assert v is not None and v.rule == "backend-gpu", v
    assert (v.sglang_exception, v.sglang_message.split(" Please")[0]) == ("AssertionError", FA3_SAYS)


@pytest.mark.parametrize("name, capability, flags", [
    ("k2.6-tp8-pcie.yaml", "9.0", ["--attention-backend", "fa3"]),
    ("dense-27b-tp1.yaml", "8.0", ["--attention-backend", "fa3"]),  # a non-MLA model on SM 8.x
    ("k2.6-tp8-pcie.yaml", "12.0", ["--attention-backend", "fa3", "--kv-cache-dtype", "fp8_e5m2"]),  # triton
    ("dense-27b-tp1.yaml", "10.0", ["--attention-backend", "triton", *SPEC]),
])
def test_fa3_on_its_gpus_or_replaced_starts(name, capability, flags):
    assert _plan(name, capability, *flags).startup_violation is None


def test_the_simulated_server_exits_with_sglangs_words_after_the_load(tmp_path):
    profile = tmp_path / "k26-sm120.yaml"
    profile.write_text(yaml.safe_dump(_profile_data("k2.6-tp8-pcie.yaml", "12.0")))
    run = subprocess.run([sys.executable, "-m", "tuner.sim", "--model-path", "m", "--tp-size", "8",
                          "--attention-backend", "fa3", "--sim-profile", str(profile), "--sim-load-seconds", "0",
                          "--port", "0", *SPEC], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1, run.stderr
    log = run.stderr
    assert "Load weight end." in log and f"AssertionError: {FA3_SAYS}" in log
    assert log.index("Load weight end.") < log.index(FA3_SAYS)
