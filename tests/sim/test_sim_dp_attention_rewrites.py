"""What SGLang 0.5.23 rewrites under attention data parallelism, as the simulator's ``/server_info``
reports it (``arg_groups/parallel_hook.py``, ``handle_data_parallelism``: ``schedule_conservativeness``
times 0.3, ``chunked_prefill_size // attn_dp_size``), in-process.

QA (qa145): a generator of 300 speculative launches (EAGLE/EAGLE3/NEXTN in any case, tp 1-8,
``--enable-dp-attention``/``--dp-size``/``--attn-dp-size``, ``--ep-size``, CUDA-graph sizes,
``--max-running-requests``, ``--chunked-prefill-size``, mixed chunk, overlap off, page sizes, backends)
through SGLang's own ``prepare_server_args`` + ``resolve_once`` on CPU (``benchmarks/sglang_agreement.py``'s
child) against ``tuner.sim.args.resolve_launch``: every verdict agreed; with attention DP the simulator
reported ``chunked_prefill_size`` 8192 and ``schedule_conservativeness`` 1.0 where SGLang reports 4096 and
0.3 (``--tp-size 4 --attn-dp-size 2 --chunked-prefill-size 8192``). Each expected value below is
SGLang's child's answer for that command line.
"""

import logging

import pytest

from tuner.sim.args import parse_args, resolve_launch
from tuner.sim.profile import load_profile

LOG = logging.getLogger("sim-dp-attention-test")
SPEC = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
        "--speculative-num-steps", "3", "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4"]


def _reported(*flags: str) -> dict:
    ns = parse_args(["--model-path", "m", *SPEC, *flags])
    return resolve_launch(ns, LOG, load_profile("dense-27b-tp1")).server_args


@pytest.mark.parametrize("flags, chunked, conservativeness", [
    (("--tp-size", "4", "--attn-dp-size", "2", "--chunked-prefill-size", "8192"), 4096, 0.3),
    (("--tp-size", "8", "--enable-dp-attention", "--dp-size", "4", "--chunked-prefill-size", "8192"), 2048, 0.3),
    (("--tp-size", "4", "--attn-dp-size", "4", "--chunked-prefill-size", "100"), 25, 0.3),
    (("--tp-size", "4", "--attn-dp-size", "4", "--chunked-prefill-size", "-1"), -1, 0.3),  # -1 // 4 in SGLang
    (("--tp-size", "2", "--attn-dp-size", "2", "--schedule-conservativeness", "0.5",
      "--chunked-prefill-size", "4096"), 2048, 0.15),
    # no attention DP: nothing rewritten (DP replicas alone, and the deprecated flag with --dp-size 1)
    (("--tp-size", "4", "--dp-size", "2", "--chunked-prefill-size", "8192"), 8192, 1.0),
    (("--tp-size", "4", "--enable-dp-attention", "--chunked-prefill-size", "8192"), 8192, 1.0),
])
def test_attention_dp_rewrites_are_reported_as_sglang_reports_them(flags, chunked, conservativeness):
    args = _reported(*flags)
    assert args["chunked_prefill_size"] == chunked
    assert args["schedule_conservativeness"] == pytest.approx(conservativeness)


@pytest.mark.parametrize("flags, given, per_dp", [
    (("--tp-size", "8", "--attn-dp-size", "8", "--max-running-requests", "12"), 12, 1),
    (("--tp-size", "8", "--attn-dp-size", "8", "--max-running-requests", "256"), 256, 32),
    (("--tp-size", "4", "--max-running-requests", "16"), 16, 16),
    (("--tp-size", "4",), 48, 48),  # unset with speculation: SGLang's 48
])
def test_the_scheduler_state_reports_the_cap_given_and_each_workers_share(flags, given, per_dp):
    # /server_info's internal_states: the resolved args (max_running_requests as given) and the scheduler's
    # own cap, per DP worker (scheduler_components/internal_state.py _add_topology:
    # effective_max_running_requests_per_dp; kv_cache_configurator.py line 3128, max(1, N // attn_dp_size)).
    # QA (qa226): the simulator reported the whole server's cap under both keys (8 and 8 for the first).
    from tuner.sim.api import SimService
    from tuner.sim.model import PerfModel
    from tuner.sim.server_info import server_info_body

    profile = load_profile("dense-27b-tp1")
    plan = resolve_launch(parse_args(["--model-path", "m", *SPEC, *flags]), LOG, profile)
    state = server_info_body(SimService(plan, PerfModel(profile), profile_name="p", speedup=1.0,
                                        seed=0))["internal_states"][0]
    assert (state["max_running_requests"], state["effective_max_running_requests_per_dp"]) == (given, per_dp)
