"""tuner.engine.verify: each rule on a suite result shaped as the server would send it. (The same
rules against a real lying server, through a whole study: tests/engine/test_study_faults.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.bench import RequestRecord, SuiteResult
from tuner.config.study import load_study
from tuner.engine.verify import verify_result
from tuner.sglang.rules import SpecConfig

ROOT = Path(__file__).resolve().parents[2]
SPEC = SpecConfig(3, 1, 4)


@pytest.fixture
def config(tmp_path):
    p = tmp_path / "v.yaml"
    p.write_text(f"name: v\nsearch_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}\n"
                 "server: {backend: sim, model_path: m, draft_model_path: d, sim: {speedup: 20}}\n"
                 "bench: {suite: quick}\n")
    return load_study(p)


def info(spec: SpecConfig | None = SPEC, **kw) -> dict:
    out = {"version": "0.5.23+sim", "sim_speedup": 20.0, "speculative_algorithm": "EAGLE3" if spec else None,
           "speculative_num_steps": spec.num_steps if spec else None,
           "speculative_eagle_topk": spec.eagle_topk if spec else None,
           "speculative_num_draft_tokens": spec.num_draft_tokens if spec else None}
    out.update(kw)
    return {k: v for k, v in out.items() if v != "drop"}


def result(info_: dict | None, records: list[RequestRecord], ignore_eos: bool = True) -> SuiteResult:
    scale = info_.get("sim_speedup", 1.0) if info_ else 1.0
    return SuiteResult(suite={"ignore_eos": ignore_eos}, server_info=info_, records=records,
                       time_scale=scale if isinstance(scale, float) else 1.0, complete=True)


def rec(tokens=16, asked=16, verify=None, accept=None, ok=True) -> RequestRecord:
    return RequestRecord("single", "fib", asked, ok=ok, completion_tokens=tokens, spec_verify_ct=verify,
                         spec_accept_length=accept, start_s=0.0, end_s=1.0)


def test_an_honest_trial_and_an_honest_baseline_pass(config):
    assert verify_result(result(info(), [rec(16, verify=6)]), SPEC, config, "EAGLE3") is None
    assert verify_result(result(info(None), [rec(16)]), None, config, "EAGLE3") is None


@pytest.mark.parametrize("tokens, verify, ok", [
    (16, 4, True),    # 1 prefill token + 4 verify steps x 3.75: within num_steps + 1 = 4 per step
    (17, 4, True),    # the bound exactly: 1 + 4 x 4
    (18, 4, False),   # one more than a draft of 3 steps can give
    (4, 4, True),     # one token per verify step: accept length 1
    (3, 4, False),    # fewer tokens than verify steps: below 1
])
def test_accept_length_bounds_count_the_prefill_token(config, tokens, verify, ok):
    r = result(info(), [rec(tokens, asked=tokens, verify=verify)])
    failure = verify_result(r, SPEC, config, "EAGLE3")
    assert (failure is None) == ok, failure
    if not ok:
        # the message states the bound it applied: num_steps + 1 per step plus the prefill's token
        assert failure[0] == "bad_response" and "outside 1 to num_steps + 1 + 1/spec_verify_ct = 4.25 (at most " \
            "17 tokens" in failure[1], failure


@pytest.mark.parametrize("tokens, ok", [(256, False), (2, False), (1, True)])
def test_tokens_beyond_the_prefills_in_no_verify_step_cannot_be_true(config, tokens, ok):
    # SGLang 0.5.23 sends spec_verify_ct only above 0; a 0 beside decoded tokens passed, its accept
    # length missing. One token is the prefill's alone: no verify step needed.
    failure = verify_result(result(info(), [rec(tokens, asked=tokens, verify=0)]), SPEC, config, "EAGLE3")
    assert (failure is None) == ok, failure
    if not ok:
        assert failure[0] == "bad_response" and f"{tokens} tokens in 0 verify steps" in failure[1], failure


@pytest.mark.parametrize("accept, ok", [
    (5.0, True),    # one verify step and the prefill's token: (num_steps + 1) + 1
    (4.5, True),
    (5.5, False),   # beyond num_steps + 2 however few the verify steps
    (9.5, False),
    (0.5, False),
])
def test_a_reported_accept_length_alone_is_bounded_too(config, accept, ok):
    # no spec_verify_ct: the loosest bound, and the message says so (it said num_steps + 1 while
    # applying num_steps + 2)
    failure = verify_result(result(info(), [rec(16, accept=accept)]), SPEC, config, "EAGLE3")
    assert (failure is None) == ok, failure
    if not ok:
        assert failure[0] == "bad_response" and f"accept length {accept:.2f}, outside 1 to num_steps + 2 = 5 " \
            "(num_steps + 1 = 4 per verify step, plus the prefill's one token" in failure[1], failure


@pytest.mark.parametrize("tokens, ignore_eos, ok", [(16, True, True), (15, True, False), (17, True, False),
                                                     (15, False, True), (17, False, False),
                                                     (1, False, True), (0, False, False), (-16, False, False)])
def test_completion_tokens_against_what_was_asked(config, tokens, ignore_eos, ok):
    r = result(info(None), [rec(tokens, asked=16)], ignore_eos=ignore_eos)
    failure = verify_result(r, None, config, "EAGLE3")
    assert (failure is None) == ok, failure
    if not ok:
        assert failure[0] == "bad_response" and f"completion_tokens {tokens}" in failure[1]


def test_failed_requests_are_not_judged_here(config):  # they fail the trial as request_errors
    assert verify_result(result(info(), [rec(None, ok=False)]), SPEC, config, "EAGLE3") is None


@pytest.mark.parametrize("server_info, cls, says", [
    (None, "args_unverified", "no /server_info"),
    (info(speculative_algorithm="drop"), "args_unverified", "no speculative_algorithm"),
    (info(speculative_num_steps="drop"), "args_unverified", "speculative_num_steps=None"),
    (info(speculative_num_steps="3"), "args_unverified", "as integers"),
    (info(None), "args_mismatch", "runs without speculative decoding"),
    (info(SpecConfig(3, 1, 5)), "args_mismatch", "ran EAGLE3 steps=3 topk=1 draft=5"),
    (info(speculative_algorithm="EAGLE"), "args_mismatch", "ran EAGLE steps=3"),
    (info(sim_speedup="drop"), "args_unverified", "no sim_speedup"),
    (info(sim_speedup=40.0), "args_mismatch", "sim_speedup 40.0, launched with --sim-speedup 20"),
    (info(sim_speedup="drop", sim_profile="drop", version="0.5.23"), "args_unverified", "no sim_speedup"),
])
def test_what_the_server_says_it_runs(config, server_info, cls, says):
    failure = verify_result(result(server_info, [rec(16, verify=6)]), SPEC, config, "EAGLE3")
    assert failure is not None and failure[0] == cls and says in failure[1], failure


def test_a_server_that_reports_another_model_ran_something_else(config):
    # QA: a server whose /server_info named another model_path (or draft) than launched was measured
    # and joined the front. As launched, or not said (an older server), it passes.
    for said in (info(model_path="m", speculative_draft_model_path="d"), info()):
        assert verify_result(result(said, [rec(16, verify=6)]), SPEC, config, "EAGLE3") is None
    assert verify_result(result(info(None, model_path="m"), [rec(16)]), None, config, "EAGLE3") is None
    failure = verify_result(result(info(model_path="other/model"), [rec(16, verify=6)]), SPEC, config,
                            "EAGLE3")
    assert failure[0] == "args_mismatch" and "model_path 'other/model'" in failure[1], failure
    assert "--model-path 'm'" in failure[1], failure
    failure = verify_result(result(info(None, model_path="other/model"), [rec(16)]), None, config, "EAGLE3")
    assert failure[0] == "args_mismatch" and "model_path 'other/model'" in failure[1], failure
    failure = verify_result(result(info(speculative_draft_model_path="other/draft"), [rec(16, verify=6)]),
                            SPEC, config, "EAGLE3")
    assert failure[0] == "args_mismatch", failure
    assert "speculative_draft_model_path 'other/draft'" in failure[1], failure


def test_a_hub_name_resolved_to_local_files_is_the_launched_model(config, tmp_path, monkeypatch):
    # SGLang 0.5.23 reports a Hub or ModelScope name it resolved as the local files it downloaded
    # (arg_groups/model_path_hook.py); a launched path that exists it keeps, so another one is a lie.
    downloaded = tmp_path / "cache" / "m"
    downloaded.mkdir(parents=True)
    assert verify_result(result(info(model_path=str(downloaded)), [rec(16, verify=6)]), SPEC, config,
                         "EAGLE3") is None
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m").mkdir()  # the launched "m" is now a local path, kept as given
    failure = verify_result(result(info(model_path=str(downloaded)), [rec(16, verify=6)]), SPEC, config,
                            "EAGLE3")
    assert failure[0] == "args_mismatch" and "--model-path 'm'" in failure[1], failure


def test_a_baseline_that_speculates_is_no_baseline(config):
    failure = verify_result(result(info(), [rec(16)]), None, config, "EAGLE3")
    assert failure[0] == "args_mismatch" and "baseline's server runs speculative decoding" in failure[1]
    failure = verify_result(result(info(None), [rec(16, verify=6)]), None, config, "EAGLE3")
    assert failure[0] == "args_mismatch" and "6 verify steps from an autoregressive server" in failure[1]
    # one verify step: said in the singular, and still the baseline's args_mismatch
    failure = verify_result(result(info(None), [rec(16, verify=1)]), None, config, "EAGLE3")
    assert failure[0] == "args_mismatch" and "1 verify step from an autoregressive server" in failure[1], failure


def test_sglang_is_wall_time_and_a_simulator_posing_as_it_is_refused(config):
    sglang = config.model_copy(update={"server": config.server.model_copy(update={"backend": "sglang"})})
    real = info(sim_speedup="drop", version="0.5.23")
    assert verify_result(result(real, [rec(16, verify=6)]), SPEC, sglang, "EAGLE3") is None
    failure = verify_result(result(info(), [rec(16, verify=6)]), SPEC, sglang, "EAGLE3")
    assert failure[0] == "args_mismatch" and "says it is the simulator" in failure[1]


def test_a_simulator_that_stood_behind_model_time_fails_the_measurement(config):
    kept = {"fell_behind": True, "deliveries": 48, "late_deliveries": 9, "max_lag_wall_ms": 8005.0}
    res = result(info(), [rec(verify=8)])
    res.timekeeping = kept
    cls, says = verify_result(res, SPEC, config, "EAGLE3")
    assert cls == "bad_response" and "stood 8.01 s (wall) behind model time" in says and "9 of 48" in says
    res.timekeeping = {**kept, "max_lag_wall_ms": 2.5, "late_deliveries": 0}  # scheduler jitter
    assert verify_result(res, SPEC, config, "EAGLE3") is None
    res.timekeeping = None  # not read (SGLang, or a server that did not answer after the suite)
    assert verify_result(res, SPEC, config, "EAGLE3") is None


def _suite_frozen_for(seconds: float, repeats: int):
    """A real simulator (time scale 1) serving a streamed suite, its process group frozen with
    SIGSTOP for ``seconds`` from 0.3 s into the single requests (mid-request: tokens fall due while
    it is frozen); the suite result."""
    import os
    import signal
    import threading

    from support.simproc import running_sim

    from tuner.bench import run_suite

    suite = {"name": "long", "prompts": [{"name": "a", "text": "hello"}],
             "single": {"lengths": [32], "repeats": repeats},
             "sweep": {"concurrencies": [2], "max_tokens": 32},
             "warmup": {"requests": 0}, "timeout_s": 600}
    with running_sim("--model-path", "m",  # the config's
                     "--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "d",
                     "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
                     "--speculative-num-draft-tokens", "4", speedup=1.0) as sim:
        group = os.getpgid(sim.proc.pid)
        started = threading.Event()

        def freeze():
            os.killpg(group, signal.SIGSTOP)
            threading.Timer(seconds, os.killpg, (group, signal.SIGCONT)).start()

        def on_event(kind, data):
            if kind == "single" and not started.is_set():
                started.set()
                threading.Timer(0.3, freeze).start()

        # streamed: a delivery every token, so some fall due while the server is frozen
        res = run_suite(sim.url, suite, stream=True, on_event=on_event)
    assert started.is_set() and res.complete
    return res


def _at_scale_1(config):
    return config.model_copy(update={"server": config.server.model_copy(update={
        "sim": config.server.sim.model_copy(update={"speedup": 1.0})})})


def test_a_real_simulator_frozen_mid_suite_reports_it_and_fails_the_measurement(config):
    """QA: a simulator frozen with SIGSTOP for 8 s mid-sweep (less than the hang rules wait) gave a
    figure 26% low that joined the front. A real process, frozen 3 s while it serves the suite."""
    res = _suite_frozen_for(3.0, repeats=8)
    assert res.timekeeping["max_lag_wall_ms"] >= 2000, res.timekeeping
    cls, says = verify_result(res, SPEC, _at_scale_1(config), "EAGLE3")
    assert cls == "bad_response" and "behind model time" in says, says


def test_a_simulator_that_fell_behind_without_stalling_is_said_not_failed(config):
    """QA: at --sim-speedup 1000 a baseline read 17% slow, unflagged. A real process frozen 0.6 s
    (well under the 2 s that fails a measurement): its figures stand, with the simulator's own
    account said in a warning (kept in the suite JSON, shown by `tuner study run`)."""
    from tuner.engine.verify import behind_note

    res = _suite_frozen_for(0.6, repeats=6)
    assert res.timekeeping["fell_behind"], res.timekeeping
    assert verify_result(res, SPEC, _at_scale_1(config), "EAGLE3") is None
    note = behind_note(res)
    assert note.startswith("the simulator fell behind model time (") and "lower server.sim.speedup" in note
    res.timekeeping = {**res.timekeeping, "fell_behind": False}
    assert behind_note(res) is None


def test_a_stall_of_exactly_the_limit_fails_the_measurement(config):
    """The rule is "STALL_WALL_S or more" behind model time, and "OUTSIDE_WALL_S or more" outside the
    server's clock: at exactly the limit the measurement fails, a millisecond under it stands. (A
    mutation that judged ``>`` instead of ``>=`` passed every test before.)"""
    from tuner.engine.verify import OUTSIDE_WALL_S, STALL_WALL_S

    res = result(info(), [rec(verify=8)])
    res.timekeeping = {"fell_behind": True, "deliveries": 10, "late_deliveries": 1,
                       "max_lag_wall_ms": STALL_WALL_S * 1000}
    cls, says = verify_result(res, SPEC, config, "EAGLE3")
    assert cls == "bad_response" and "behind model time" in says, says
    res.timekeeping["max_lag_wall_ms"] = STALL_WALL_S * 1000 - 1
    assert verify_result(res, SPEC, config, "EAGLE3") is None

    def waited(outside_s: float) -> RequestRecord:
        r = rec(verify=8)
        r.start_s, r.server_latency_s, r.end_s = 0.0, 1.0, 1.0 + outside_s
        return r

    cls, says = verify_result(result(info(), [waited(OUTSIDE_WALL_S)]), SPEC, config, "EAGLE3")
    assert cls == "bad_response" and "outside the server's own clock" in says, says
    assert verify_result(result(info(), [waited(OUTSIDE_WALL_S - 0.001)]), SPEC, config, "EAGLE3") is None
