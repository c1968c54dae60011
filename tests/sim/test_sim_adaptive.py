"""--speculative-adaptive on the simulated server: SGLang's checks (tuner.sglang.rules), so an exported
adaptive config starts the simulator exactly when it would start SGLang."""

from __future__ import annotations

import json
import subprocess

import pytest
import requests
from support.simproc import running_sim, sim_argv

from tuner.sglang.adaptive import adaptive_candidate_steps, resolve_adaptive
from tuner.sglang.rules import SpecConfig

POLICY = {"1": {"candidate_steps": [5]}, "8": {"candidate_steps": [3]}, "32": {"candidate_steps": [1]},
          "_tuner": {"note": "not a batch size: skipped"}}


@pytest.mark.parametrize("config,expected", [
    (POLICY, [1, 3, 5]),
    ({"4": {"candidate_steps": [0, 2]}}, [0, 2]),
])
def test_candidate_steps(config, expected):
    assert adaptive_candidate_steps(config) == expected


@pytest.mark.parametrize("config,message", [
    ({"_tuner": {}}, "at least one integer-string BS key"),
    ({"1": {"candidate_steps": []}}, "non-negative ints"),
    ({"1": {"candidate_steps": [-1]}}, "non-negative ints"),
    ({"1": {"steps": [1]}}, "non-negative ints"),
])
def test_bad_adaptive_configs(config, message):
    with pytest.raises(ValueError, match=message):
        adaptive_candidate_steps(config)


def test_resolve_adaptive():
    assert resolve_adaptive(SpecConfig(3, 1, 9), [1, 3, 5]) == (SpecConfig(3, 1, 4), None)
    assert resolve_adaptive(SpecConfig(None, None, None), [1, 3, 5]) == (SpecConfig(3, 1, 4), None)
    spec, warning = resolve_adaptive(SpecConfig(2, 4, 8), [1, 3])
    assert spec == SpecConfig(2, 4, 8) and "speculative_adaptive disabled" in warning
    with pytest.raises(ValueError, match="not in the adaptive config candidate_steps"):
        resolve_adaptive(SpecConfig(2, 1, 3), [1, 3, 5])
    # adaptive_spec_params.py: the other server arguments that switch it off, in SGLang's order
    for args, says in (({"enable_dp_attention": True, "dp_size": 8}, "attention DP is not supported"),
                       ({"attn_dp_size": 8}, "attention DP is not supported"),  # QA: 0.5.23's own flag
                       ({"enable_multi_layer_eagle": True, "enable_pdmux": True}, "enable_multi_layer_eagle=True"),
                       ({"enable_pdmux": True}, "enable_pdmux=True is not supported")):
        spec, warning = resolve_adaptive(SpecConfig(3, 1, 4), [1, 3, 5], args)
        assert spec == SpecConfig(3, 1, 4) and warning.startswith(f"speculative_adaptive disabled: {says}")
    assert resolve_adaptive(SpecConfig(3, 1, 4), [1, 3, 5], {"enable_dp_attention": True, "dp_size": 1})[1] is None
    assert resolve_adaptive(SpecConfig(3, 1, 4), [1, 3, 5], {"attn_dp_size": 1})[1] is None


def _policy(tmp_path) -> str:
    p = tmp_path / "policy.json"
    p.write_text(json.dumps(POLICY))
    return str(p)


def _spec(steps, topk, draft):
    return ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
            "--speculative-num-steps", str(steps), "--speculative-eagle-topk", str(topk),
            "--speculative-num-draft-tokens", str(draft)]


def test_adaptive_server_starts_with_a_candidate_step(tmp_path):
    args = [*_spec(3, 1, 4), "--speculative-adaptive", "--speculative-adaptive-config", _policy(tmp_path)]
    with running_sim(*args) as sim:
        info = requests.get(sim.url + "/server_info", timeout=10).json()
    assert info["speculative_adaptive"] is True
    assert (info["speculative_num_steps"], info["speculative_num_draft_tokens"]) == (3, 4)
    assert "adaptive steps by batch size are not simulated" in sim.log


def test_adaptive_refuses_steps_outside_the_candidates(tmp_path):
    argv = sim_argv(*_spec(2, 1, 3), "--speculative-adaptive", "--speculative-adaptive-config", _policy(tmp_path))
    r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
    assert r.returncode != 0
    assert "ValueError: --speculative-num-steps=2 is not in the adaptive config candidate_steps [1, 3, 5]" in r.stderr


def test_adaptive_with_a_tree_falls_back_to_static(tmp_path):
    args = [*_spec(2, 4, 8), "--speculative-adaptive", "--speculative-adaptive-config", _policy(tmp_path)]
    with running_sim(*args) as sim:
        info = requests.get(sim.url + "/server_info", timeout=10).json()
    assert info["speculative_adaptive"] is False
    assert (info["speculative_num_steps"], info["speculative_eagle_topk"]) == (2, 4)
    assert "speculative_adaptive disabled" in sim.log
