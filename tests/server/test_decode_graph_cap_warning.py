"""A study's own request cap or decode CUDA-graph sizes below the top benchmark level are warned about
with what they do to the levels above and the fix, however SGLang 0.5.23 is told the sizes.

QA (qa226): ``max_running_requests: 16`` at a top level of 32 was warned "requests above it queue (or run
without CUDA graphs)", naming neither which nor what to set; ``cuda_graph_bs_decode: [1, 2, 4, 8]`` (SGLang
captures decode graphs up to its largest entry, whatever max_bs says: ``arg_groups/memory_hook.py`` lines
201-207) and ``cuda_graph_config: '{"decode": {"max_bs": 8}}'`` (the JSON wins over the flags:
``arg_groups/cuda_graph_hook.py``, ``parse_cuda_graph_config``) were not warned about at all.
"""

from __future__ import annotations

import pytest

from tuner.config.study import ServerSettings
from tuner.server.command import pin_server_args


def _warnings(args: dict, extra_args: list | None = None) -> list[str]:
    server = ServerSettings(backend="sglang", model_path="m", draft_model_path="d", tp_size=8, args=args,
                            extra_args=extra_args or [])
    return pin_server_args(server, None, 32)[2]


def test_a_request_cap_below_the_top_level_says_what_queues_and_the_fix():
    (line,) = _warnings({"max_running_requests": 16})
    assert line.startswith("--max-running-requests 16 is below the largest benchmark concurrency 32: "), line
    assert "wait in SGLang's queue" in line and "raise it to 32 or leave it out" in line, line


@pytest.mark.parametrize("args, extra_args", [
    ({"cuda_graph_bs_decode": [1, 2, 4, 8]}, []),
    ({"cuda_graph_max_bs_decode": 64, "cuda_graph_bs_decode": [1, 2, 4, 8]}, []),
    ({"cuda_graph_config": '{"decode": {"max_bs": 8}}'}, []),
    ({}, ["--cuda-graph-bs-decode", "1", "8"]),
], ids=["bs-list", "bs-list-over-max", "config", "extra-args"])
def test_decode_graph_sizes_below_the_top_level_are_warned_about(args, extra_args):
    (line,) = _warnings(args, extra_args)
    assert "largest decode CUDA-graph batch, 8" in line and "below the largest benchmark concurrency 32" in line, line
    assert "run without CUDA graphs; give sizes up to 32" in line, line


@pytest.mark.parametrize("args", [
    {"cuda_graph_bs_decode": [1, 8, 32]},
    {"cuda_graph_config": '{"decode": {"bs": [4, 48]}}', "cuda_graph_max_bs_decode": 8},  # bs wins over max_bs
    {"disable_cuda_graph": True, "cuda_graph_bs_decode": [1, 2]},  # no decode graphs at all: nothing is below
])
def test_sizes_that_cover_the_top_level_or_no_graphs_are_not_warned_about(args):
    assert _warnings(args) == []
