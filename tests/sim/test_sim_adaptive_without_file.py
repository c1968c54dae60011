"""--speculative-adaptive without --speculative-adaptive-config, in-process (SGLang's order).

QA (README "The simulated SGLang server", Flags: "topk other than 1 switches adaptive off with
SGLang's warning"): SGLang 0.5.23 switches adaptive off (``_maybe_disable_adaptive``) before it
reads a step table (``_init_adaptive_speculative_params``; speculative_hook.py lines 261-264), so
a tree with ``--speculative-adaptive`` and no config file starts, static, with the warning. The
simulator refused it for the missing file (ValueError, exit 1) where SGLang runs it.
"""

import logging

import pytest

from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.model import load_profile

SPEC = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d"]


def _plan(steps: int, topk: int, draft: int):
    ns = parse_args(["--model-path", "moonshotai/Kimi-K2.6", *SPEC, "--speculative-num-steps", str(steps),
                     "--speculative-eagle-topk", str(topk), "--speculative-num-draft-tokens", str(draft),
                     "--speculative-adaptive"])
    return ns, resolve_launch(ns, logging.getLogger("sim-test"), load_profile("k2.6-tp8-pcie"))


def test_a_tree_with_adaptive_and_no_config_file_runs_static_as_in_sglang(caplog):
    with caplog.at_level(logging.WARNING, logger="sim-test"):
        ns, plan = _plan(2, 4, 8)
    assert ns.speculative_adaptive is False
    assert "speculative_adaptive disabled: speculative_eagle_topk=4" in caplog.text
    assert (plan.server_args["speculative_num_steps"], plan.server_args["speculative_eagle_topk"]) == (2, 4)


def test_a_chain_that_stays_adaptive_still_needs_the_file():
    with pytest.raises(ValueError, match="needs --speculative-adaptive-config FILE"):
        _plan(3, 1, 4)
