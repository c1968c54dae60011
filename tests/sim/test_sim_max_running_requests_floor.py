"""``--max-running-requests 0`` (or a negative number) is not "no limit" in SGLang 0.5.23: its
argument handling keeps the value (``/server_info`` reports 0), and its memory pool sizes the requests
per DP worker as ``max(1, max_running_requests // attn_dp_size)`` (``mem_cache/kv_cache_configurator.py``,
``resolve_max_num_reqs``), so the scheduler runs one request at a time.

QA (qa145): SGLang's own ``prepare_server_args`` + ``resolve_once`` on CPU reported
``max_running_requests`` 0 and -1 as given; the simulator's scheduler took 0 as no cap at all (every
request of a concurrency-64 level batched together) where SGLang serializes them. In-process: the
launch plan is the unit under test, and the scheduler it builds reads its cap from it.
"""

import logging

import pytest

from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import load_profile
from tuner.sim.scheduler import BatchEngine

LOG = logging.getLogger("sim-mrr-floor-test")
SPEC = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
        "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]


def _plan(*flags: str):
    return resolve_launch(parse_args(["--model-path", "m", *SPEC, *flags]), LOG, load_profile("dense-27b-tp1"))


@pytest.mark.parametrize("given, cap", [("0", 1), ("-1", 1), ("-64", 1), ("1", 1), ("8", 8)])
def test_the_scheduler_runs_at_least_one_request_and_reports_the_value_given(given, cap):
    plan = _plan("--max-running-requests", given)
    assert plan.server_args["max_running_requests"] == int(given)  # as SGLang's resolved_dict has it
    assert plan.max_running_requests == cap
    engine = BatchEngine(None, spec=plan.spec, max_running_requests=plan.max_running_requests, speedup=1.0)
    assert engine.max_running == cap


def test_unset_stays_speculations_48():
    plan = _plan()
    assert (plan.server_args["max_running_requests"], plan.max_running_requests) == (48, 48)
