"""A server that stops answering ends the suite as hung (tuner.bench.watch's rules), with everything
measured kept; and the time scale is never assumed. Real processes: the stand-in server
(tests/support/standin_server.py) frozen with SIGSTOP, or wedged, on 127.0.0.1."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.standin import running_standin

from tuner.bench import HangPolicy, ServerHungError, ServerInfoError, run_suite
from tuner.cli import cli

SPEC = ("--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4")
SUITE = {"name": "t", "prompts": [{"name": "fib", "text": "def fib(n):"}, {"name": "haiku", "text": "autumn"}],
         "single": {"lengths": [16], "repeats": 2}, "sweep": {"concurrencies": [1, 4], "max_tokens": 16},
         "warmup": {"requests": 1, "max_tokens": 4}, "timeout_s": 2.0}
#: the watchdog in a hurry; requests may wait far longer than it (timeout_s 300)
QUICK_WATCH = HangPolicy(probe_interval_s=0.3, probe_timeout_s=0.5, silent_probes=2, timed_out_steps=2)


def freeze_on(phase: str, srv, after: int = 1):
    seen = []

    def on_event(p: str, info: dict) -> None:
        if p == phase:
            seen.append(info)
            if len(seen) == after:
                srv.freeze()

    return on_event


def test_a_frozen_server_is_found_by_the_watchdog_long_before_its_requests_time_out():
    with running_standin("honest", *SPEC) as srv:
        with pytest.raises(ServerHungError) as err:
            run_suite(srv.url, {**SUITE, "timeout_s": 300.0}, hang=QUICK_WATCH,
                      on_event=freeze_on("single", srv, after=2))
        assert srv.frozen()
    partial = err.value.partial
    assert "GET /v1/models got no answer 2 times in a row" in str(err.value) and err.value.reason == "silence"
    assert not partial.complete and partial.error == str(err.value)
    # what was measured before the freeze is kept: the warm-up and the first single request
    assert [r.phase for r in partial.records if r.ok] == ["warmup", "single"]


def test_requests_timing_out_twice_in_a_row_end_the_run_as_hung():
    """Frozen right after /server_info: the warm-up request times out, then the cache flush before
    the single requests; the default watchdog (10 s probes) has not spoken yet."""
    with running_standin("honest", *SPEC) as srv:
        with pytest.raises(ServerHungError) as err:
            run_suite(srv.url, SUITE, on_event=freeze_on("server_info", srv))
    assert "2 steps in a row timed out" in str(err.value) and "/flush_cache" in str(err.value)
    assert err.value.reason == "timeouts"
    recs = err.value.partial.records
    assert len(recs) == 1 and recs[0].phase == "warmup" and recs[0].error_kind == "timeout"


def test_a_wedged_server_answers_probes_but_generates_nothing():
    with running_standin("wedge", *SPEC) as srv:
        with pytest.raises(ServerHungError) as err:
            run_suite(srv.url, SUITE, hang=QUICK_WATCH)
    assert "2 steps in a row timed out" in str(err.value) and "went unanswered too" not in str(err.value)


def test_a_run_past_its_deadline_is_hung_and_keeps_what_it_measured():
    # speedup 1: each 16-token request takes 0.16 s (0.2 s speculating at accept 2.8 x 0.8 ...);
    # the suite needs several seconds, the deadline gives it one.
    slow = {**SUITE, "single": {"lengths": [16], "repeats": 20}}
    with running_standin("honest", *SPEC, speedup=1.0) as srv:
        with pytest.raises(ServerHungError) as err:
            run_suite(srv.url, slow, deadline_s=1.0)
    assert "passed its deadline of 1 s" in str(err.value) and err.value.reason == "deadline"
    ok = [r for r in err.value.partial.records if r.ok]
    assert ok and len(ok) < 41  # some measured, kept; the rest never ran


def test_a_hang_on_server_info_is_hung_not_unreachable():
    with running_standin("freeze_info", *SPEC) as srv:
        with pytest.raises(ServerHungError) as err:
            run_suite(srv.url, SUITE)
    assert "GET /server_info" in str(err.value) and "got no answer within 2 s" in str(err.value)
    assert err.value.partial.records == [] and err.value.reason == "server_info"


@pytest.mark.parametrize("mode, says", [("no_scale", "None"), ("bad_scale", "'fast'")])
def test_a_simulator_without_a_usable_time_scale_is_refused_before_any_request(mode, says):
    with running_standin(mode, *SPEC) as srv:
        with pytest.raises(ServerInfoError, match=f"sim_speedup is {says}, not a positive number"):
            run_suite(srv.url, SUITE)


def test_tuner_bench_against_a_frozen_server_exits_1_with_the_partial_result(tmp_path):
    out = tmp_path / "r.json"
    with running_standin("freeze", *SPEC) as srv:  # freezes itself just after answering /server_info
        suite = tmp_path / "s.yaml"
        suite.write_text(json.dumps(SUITE))
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite), "--json", str(out)])
    assert r.exit_code == 1, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "(server hung); partial result saved to" in lines[0], r.output
    saved = json.loads(out.read_text())
    assert saved["complete"] is False and saved["error"] in lines[0]
