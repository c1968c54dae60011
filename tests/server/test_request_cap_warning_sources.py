"""The warning that a study's own ``--max-running-requests`` (or CUDA-graph batch size) runs fewer requests
at once than the largest benchmark concurrency (tuner/server/command.py, ``pin_server_args``) reads the
value the server runs wherever the study gives it: ``server.extra_args`` (which the attention-DP width is
read from too) and a number written as text in ``server.args`` (SGLang's argparse reads "12" as 12).

QA (qa152): ``extra_args: [--attn-dp-size, '8', --max-running-requests, '12']`` with a top concurrency of
12 ran 8 at once (SGLang 0.5.23: ``max(1, 12 // 8)`` per worker, ``resolve_max_num_reqs``) with no
warning, as did ``server.args: {attn_dp_size: 8, max_running_requests: "12"}``; the same value as an
integer in ``server.args`` was warned about. In-process: the launch plan is the unit under test."""

from __future__ import annotations

import pytest

from tuner.config.study import ServerSettings
from tuner.server.launcher import plan_launch
from tuner.sglang.rules import SpecConfig

BELOW = ("--max-running-requests 12 (SGLang runs 8 at once on 8 attention-DP workers) is below the largest "
         "benchmark concurrency 12")


def _warnings(**server) -> list[str]:
    settings = ServerSettings(**{"backend": "sglang", "model_path": "m", "draft_model_path": "d",
                                 "tp_size": 8, **server})
    plan = plan_launch(settings, SpecConfig(3, 1, 4), port=31000, max_concurrency=12, log_warnings=False)
    assert "max_running_requests" not in plan.pinned  # the study's value is the server's
    return plan.warnings


@pytest.mark.parametrize("server", [
    {"args": {"attn_dp_size": 8, "max_running_requests": 12}},            # as before
    {"extra_args": ["--attn-dp-size", "8", "--max-running-requests", "12"]},
    {"args": {"attn_dp_size": 8}, "extra_args": ["--max-running-requests=12"]},
    {"args": {"attn_dp_size": 8, "max_running_requests": "12"}},
], ids=["args", "extra_args", "extra_args-equals", "args-as-text"])
def test_a_value_attention_dp_runs_below_the_top_level_is_warned_wherever_given(server):
    warnings = _warnings(**server)
    assert len(warnings) == 1 and BELOW in warnings[0], warnings


def test_a_value_below_the_top_level_in_extra_args_is_warned_without_attention_dp():
    warnings = _warnings(extra_args=["--max-running-requests", "8"])
    said = "--max-running-requests 8 is below the largest benchmark concurrency 12"
    assert len(warnings) == 1 and said in warnings[0], warnings


@pytest.mark.parametrize("server", [
    {"extra_args": ["--attn-dp-size", "8", "--max-running-requests", "96"]},
    {"args": {"attn_dp_size": 8, "max_running_requests": "96"}},
    {"extra_args": ["--max-running-requests", "12"]},
])
def test_a_value_that_runs_the_top_level_is_not_warned_about(server):
    assert _warnings(**server) == []
