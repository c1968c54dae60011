"""With attention data parallelism SGLang 0.5.23 sizes each worker's pool for ``max(1,
max_running_requests // attn_dp_size)`` requests (``mem_cache/kv_cache_configurator.py`` line 3128,
``resolve_max_num_reqs``) and reports the value as given; its dispatcher routes round robin, not by
load. So the launcher's pin of ``--max-running-requests`` (the largest benchmark concurrency) is
multiplied by the attention-DP workers, a study's own value that runs fewer than the top level at
once is warned about, and the simulator runs what SGLang runs.

QA (qa146): with ``attn_dp_size 8`` and a top concurrency of 12 the pin was 12, which SGLang runs as
8 at once (the top level queued), and the simulator ran 12. In-process: the launch plan and the
simulator's launch plan are the units under test."""

from __future__ import annotations

import logging

import pytest

from tuner.config.study import ServerSettings
from tuner.server.launcher import plan_launch
from tuner.sglang.rules import SpecConfig
from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import load_profile


def _plan(max_concurrency=12, **server):
    settings = ServerSettings(**{"backend": "sglang", "model_path": "m", "draft_model_path": "d", **server})
    return plan_launch(settings, SpecConfig(3, 1, 4), port=31000, max_concurrency=max_concurrency)


@pytest.mark.parametrize("server", [
    {"tp_size": 8, "args": {"attn_dp_size": 8}},
    {"tp_size": 8, "extra_args": ["--attn-dp-size", "8"]},
    {"tp_size": 8, "args": {"dp_size": 8, "enable_dp_attention": True}},
])
def test_the_pin_lets_every_attention_dp_worker_hold_the_top_level(server):
    plan = _plan(**server)
    assert plan.pinned["max_running_requests"] == 96
    assert plan.argv[plan.argv.index("--max-running-requests") + 1] == "96"
    assert plan.warnings == []


def test_without_attention_dp_the_pin_is_the_top_level():
    assert _plan(tp_size=8, args={"dp_size": 2}).pinned["max_running_requests"] == 12  # replicas take it whole
    assert _plan(tp_size=8).pinned["max_running_requests"] == 12


def test_a_study_value_attention_dp_runs_below_the_top_level_is_warned_about():
    plan = _plan(tp_size=8, args={"attn_dp_size": 8, "max_running_requests": 12})
    assert "max_running_requests" not in plan.pinned
    assert len(plan.warnings) == 1, plan.warnings
    assert "--max-running-requests 12 (SGLang runs 8 at once on 8 attention-DP workers) is below the largest " \
           "benchmark concurrency 12" in plan.warnings[0]
    assert _plan(tp_size=8, args={"attn_dp_size": 8, "max_running_requests": 96}).warnings == []


@pytest.mark.parametrize("flags, runs", [
    (["--attn-dp-size", "8", "--max-running-requests", "12"], 8),
    (["--attn-dp-size", "8", "--max-running-requests", "96"], 96),
    (["--attn-dp-size", "4", "--max-running-requests", "2"], 4),
    (["--max-running-requests", "12"], 12),
])
def test_the_simulator_runs_what_sglang_runs_and_reports_the_value_given(flags, runs):
    spec = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d", "--speculative-num-steps",
            "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]
    ns = parse_args(["--model-path", "m", "--tp-size", "8", *spec, *flags])
    plan = resolve_launch(ns, logging.getLogger("attn-dp-cap"), load_profile("dense-27b-tp1"))
    assert plan.max_running_requests == runs
    assert plan.server_args["max_running_requests"] == int(flags[flags.index("--max-running-requests") + 1])
