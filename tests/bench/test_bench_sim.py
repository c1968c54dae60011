"""The benchmark against the simulated SGLang server as a real process (tests/support/simproc.py): figures in
model time, flushes between phases, SGLang's rewritten args read back, timeouts, a server that dies
mid-suite, and `tuner bench` end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.cli_in_process import working_dir
from support.prepared_once import prepared_once
from support.simproc import running_sim

from tuner.bench import HangPolicy, ServerDiedError, SuiteResult, run_suite
from tuner.cli import cli
from tuner.config.suite import load_suite
from tuner.sglang.rules import SpecConfig
from tuner.sim.model import PerfModel, load_profile

SPEEDUP = 50.0
SPEC_FLAGS = ("--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "sim/draft",
              "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
              "--speculative-num-draft-tokens", "3")
SUITE = {
    "name": "sim-small",
    "prompts": [{"name": "fib", "text": "Write a Python function that returns the n-th Fibonacci number."},
                {"name": "haiku", "text": "Write a haiku about autumn leaves falling in the rain."}],
    "single": {"lengths": [48], "repeats": 2},
    "sweep": {"concurrencies": [1, 8], "max_tokens": 48},
    "warmup": {"requests": 1, "max_tokens": 4},
    "timeout_s": 60,
}


def _expected(spec):
    s = load_suite(SUITE)
    model = PerfModel(load_profile("k2.6-tp8-pcie"))
    return model.expected_figures(spec, prompts=[p.text for p in s.prompts], single_lengths=s.single.lengths,
                                  concurrencies=s.sweep.concurrencies, sweep_tokens=s.sweep.max_tokens)


@pytest.fixture(scope="module")
def baseline_and_eagle(tmp_path_factory):
    """`tuner bench` against an autoregressive simulator (--json), then against EAGLE-3 with
    --compare: both results, the second run's output and the servers' logs. Run once per session,
    whichever xdist worker asks first; each worker reads its own copy."""
    out = prepared_once(tmp_path_factory, "bench", _bench_baseline_and_eagle)
    return (SuiteResult.load(out / "base.json"), SuiteResult.load(out / "eagle.json"),
            *((out / name).read_text(encoding="utf-8") for name in ("output.txt", "base.log", "eagle.log")))


def _bench_baseline_and_eagle(out: Path) -> None:
    """The two runs, in ``out`` with paths relative to it (a copy of the folder reads the same)."""
    (out / "suite.yaml").write_text(json.dumps(SUITE))
    runner = CliRunner()
    with working_dir(out):
        with running_sim("--sim-noise", "0", speedup=SPEEDUP) as sim:
            r = runner.invoke(cli, ["bench", "--url", sim.url, "--suite", "suite.yaml", "--json", "base.json"])
            base_log = sim.log
        assert r.exit_code == 0, r.output
        with running_sim(*SPEC_FLAGS, "--sim-noise", "0", speedup=SPEEDUP) as sim:
            r = runner.invoke(cli, ["bench", "--url", sim.url, "--suite", "suite.yaml", "--json", "eagle.json",
                                    "--compare", "base.json"])
            eagle_log = sim.log
        assert r.exit_code == 0, r.output
    for name, text in (("output.txt", r.output), ("base.log", base_log), ("eagle.log", eagle_log)):
        (out / name).write_text(text, encoding="utf-8")


def test_figures_are_in_model_time_and_follow_the_model(baseline_and_eagle):
    base, eagle, *_ = baseline_and_eagle
    for res, spec in ((base, None), (eagle, SpecConfig(1, 1, 2))):
        assert res.complete and res.n_failed == 0 and res.time_scale == SPEEDUP
        assert all(r.completion_tokens == r.max_tokens for r in res.records)
        exp = _expected(spec)
        # model time, not wall: client and HTTP overhead only slow things down, and loosely
        assert 0.5 * exp.single_tok_per_s < res.single_tok_per_s < 1.15 * exp.single_tok_per_s
        for c in (1, 8):
            assert 0.5 * exp.tok_per_s[c] < res.tok_per_s_at(c) < 1.15 * exp.tok_per_s[c]
        assert res.single.cv is not None and all(row.tok_per_s.n == 2 for row in res.single_rows)
    assert base.accept_length is None and base.resolved_spec is None
    assert 1.0 < eagle.accept_length <= 2.0  # steps=1: at most one draft token plus the bonus token
    assert all(r.spec_verify_ct for r in eagle.records)
    assert eagle.single_tok_per_s > base.single_tok_per_s


def test_rewritten_args_are_read_back_from_server_info(baseline_and_eagle):
    _, eagle, output, *_ = baseline_and_eagle
    # asked for 3 draft tokens; SGLang (and the simulator) run topk=1 with steps + 1 = 2
    assert eagle.resolved_spec == SpecConfig(1, 1, 2)
    assert eagle.server_info["internal_states"][0]["speculative_num_draft_tokens"] == 2
    assert eagle.server_version and "sim" in eagle.server_version
    assert "steps=1 topk=1 draft=2" in output


def test_cache_is_flushed_between_phases(baseline_and_eagle):
    base, eagle, _, base_log, eagle_log = baseline_and_eagle
    # after the warm-up, and before each of the two sweep batches
    for res, log in ((base, base_log), (eagle, eagle_log)):
        assert [f["before"] for f in res.flushes] == ["single", "sweep C=1", "sweep C=8"]
        assert all(f["ok"] for f in res.flushes)
        assert log.count("Cache flushed successfully") == 3


def test_compare_prints_the_speedup_of_every_row(baseline_and_eagle):
    base, eagle, output, *_ = baseline_and_eagle
    assert "speedup" in output and "model time" in output
    # what was sent, said as `tuner study status` says it (QA: bench printed no workload line)
    prompts = len(SUITE["prompts"])
    assert f"\nworkload: suite {SUITE['name']}: {prompts} inline prompts; prompt chars p50/p90/p99 " in output, output
    assert "; temperature 0; api generate\n" in output, output
    expected = eagle.single_tok_per_s / base.single_tok_per_s
    assert f"{expected:.2f}x" in output
    assert f"{eagle.tok_per_s_at(8) / base.tok_per_s_at(8):.2f}x" in output


@pytest.fixture(scope="module")
def eagle_sim():
    """One EAGLE-3 simulator (SPEC_FLAGS) for the OpenAI-API runs, which only send it suites: each
    run flushes its cache between phases and reads only its own requests' figures (a process
    each was a start-up and an import of the simulator per test, and nothing a test checks)."""
    with running_sim(*SPEC_FLAGS, speedup=SPEEDUP) as sim:
        yield sim


def test_openai_streaming_against_the_simulator():
    suite = {**SUITE, "single": {"lengths": [24], "repeats": 1}, "sweep": {"concurrencies": [4], "max_tokens": 24}}
    # speedup 2 (a simulator of its own): a verify step every ~20 ms of wall time, as a real decode
    # streams; at 50x a whole answer took under a millisecond, and a client held off the CPU that long
    # (CI: 4 workers on 2 cores) read every token with the first and rightly marked the gaps unseen
    with running_sim(*SPEC_FLAGS, speedup=2.0) as sim:
        res = run_suite(sim.url, suite, api="openai", stream=True)
    assert res.complete and res.n_failed == 0
    assert all(r.completion_tokens == r.max_tokens and r.ttft_s is not None for r in res.records)
    row = res.sweep_row(4)
    assert row.ttft_p50_ms is not None and row.itl_p50_ms is not None
    assert row.ttft_p50_ms < row.latency_p50_ms


def test_requests_that_time_out_are_recorded():
    # speedup 1: 40 tokens take over a model (= wall) second; the client gives up after 0.3 s
    suite = {**SUITE, "prompts": SUITE["prompts"][:1], "single": {"lengths": [40], "repeats": 2},
             "sweep": {"concurrencies": []}, "warmup": {"requests": 0}, "timeout_s": 0.3}
    with running_sim(speedup=1.0) as sim:  # two timeouts in a row would end the run as hung: not here
        res = run_suite(sim.url, suite, hang=HangPolicy(timed_out_steps=3))
    assert res.complete and len(res.records) == 2
    assert all(r.error_kind == "timeout" and not r.ok for r in res.records)
    assert all(0.25 < r.latency_s < 5 for r in res.records)
    assert res.single_rows[0].n_failed == 2 and res.single_tok_per_s is None


def test_timeout_is_model_time_whatever_the_speedup():
    """timeout_s is model seconds: 40 tokens take ~1.6 model s, so a 1 model-second timeout fails
    them at 1x and at 40x alike, and a 5 model-second timeout passes them at both (at 40x the
    wall deadline is 25 ms: a wall-clock timeout would have passed the first and failed nothing)."""
    base = {**SUITE, "prompts": SUITE["prompts"][:1], "single": {"lengths": [40], "repeats": 1},
            "sweep": {"concurrencies": []}, "warmup": {"requests": 0}, "flush_cache": False}
    for speedup in (1.0, 40.0):
        with running_sim(speedup=speedup) as sim:
            short = run_suite(sim.url, {**base, "timeout_s": 1.0})
            long = run_suite(sim.url, {**base, "timeout_s": 5.0 if speedup > 1 else 30.0})
        assert [r.error_kind for r in short.records] == ["timeout"], speedup
        assert all(r.ok for r in long.records), speedup


def test_server_killed_mid_suite_saves_the_partial_result(tmp_path):
    out = tmp_path / "partial.json"
    suite_file = tmp_path / "suite.yaml"
    suite_file.write_text(json.dumps(SUITE))
    with running_sim("--sim-crash-after-requests", "4", speedup=SPEEDUP) as sim:
        r = CliRunner().invoke(cli, ["bench", "--url", sim.url, "--suite", str(suite_file), "--json", str(out)])
        assert sim.wait(10) != 0  # the server really died
    assert r.exit_code == 1
    assert "server died mid-suite" in r.output and f"partial result saved to {out}" in r.output
    partial = SuiteResult.load(out)
    assert not partial.complete and "stopped accepting connections" in partial.error
    assert 1 <= len(partial.records) <= 5 and not partial.records[-1].ok
    assert partial.records[-1].error_kind in ("disconnected", "connection")
    with running_sim("--sim-crash-after-requests", "3", speedup=SPEEDUP) as sim:
        with pytest.raises(ServerDiedError) as err:
            run_suite(sim.url, SUITE)
    assert err.value.partial.records and not err.value.partial.complete


@pytest.mark.parametrize("stream", [False, True])
def test_openai_completions_get_the_accept_length_from_sglext(stream, eagle_sim):
    # issue 15, item 7: SGLang puts it under sglext.spec_tokens_details (return_spec_tokens_details
    # in the request; srt/entrypoints/openai/protocol.py), never in usage; tuner/bench/sglext.py reads it
    suite = {**SUITE, "single": {"lengths": [24], "repeats": 1}, "sweep": {"concurrencies": [2], "max_tokens": 24}}
    res = run_suite(eagle_sim.url, suite, api="openai", stream=stream)
    assert res.complete and res.n_failed == 0
    assert all(r.spec_verify_ct and r.spec_verify_ct > 0 for r in res.records)
    assert res.accept_length is not None and res.accept_length > 1.0


def test_a_generate_stream_of_new_text_only_keeps_the_whole_output():
    """Under SGLang's --incremental-streaming-output (/server_info says so) a /generate chunk holds
    only its new text: the client kept the last chunk's as the output, and the lossless check then
    compared fragments (a setting's chunks differ from the baseline's: every trial 'lossy')."""
    suite = {**SUITE, "single": {"lengths": [24], "repeats": 1}, "sweep": {"concurrencies": []}}
    with running_sim(*SPEC_FLAGS, "--incremental-streaming-output", speedup=SPEEDUP) as sim:
        whole = run_suite(sim.url, suite, stream=False)
        streamed = run_suite(sim.url, suite, stream=True)
    texts = {r.prompt: r.output_text for r in whole.records if r.phase == "single"}
    got = {r.prompt: r.output_text for r in streamed.records if r.phase == "single"}
    assert streamed.complete and streamed.n_failed == 0
    assert len(texts) == 2 and all(len(t) > 24 for t in texts.values())
    assert got == texts


def test_cli_bench_against_a_server_frozen_mid_suite_exits_1_and_saves_no_baseline(tmp_path, monkeypatch):
    """QA: the simulator frozen with SIGSTOP for 3 s during the single requests, then SIGCONT: `tuner
    bench` printed the distorted figures, exit 0, not a word, and saved them as a complete result that
    `--compare` took as a baseline; a study fails the same run as bad_response (tuner/engine/verify.py)."""
    import os
    import signal
    import threading

    import tuner.bench as bench_pkg  # tuner.cli.bench imports run_suite from it when the command runs

    # two repeats, four single requests of ~0.8 s wall each at 1x: the freeze, 0.2 s into the first,
    # lands among them with 2.9 s to spare (six repeats waited out eight more requests after it)
    suite = {**SUITE, "single": {"lengths": [32], "repeats": 2}, "sweep": {"concurrencies": [2], "max_tokens": 32},
             "warmup": {"requests": 0}}
    suite_file = tmp_path / "s.json"
    suite_file.write_text(json.dumps(suite))
    out = tmp_path / "frozen.json"
    with running_sim(*SPEC_FLAGS, speedup=1.0) as sim:
        group = os.getpgid(sim.proc.pid)
        started = threading.Event()

        def freeze():
            os.killpg(group, signal.SIGSTOP)
            threading.Timer(3.0, os.killpg, (group, signal.SIGCONT)).start()

        def on_event(kind, info):  # 0.2 s into the first single request: mid-request
            if kind == "single" and not started.is_set():
                started.set()
                threading.Timer(0.2, freeze).start()

        real = bench_pkg.run_suite
        monkeypatch.setattr(bench_pkg, "run_suite", lambda *a, **kw: real(*a, **{**kw, "on_event": on_event}))
        r = CliRunner().invoke(cli, ["bench", "--url", sim.url, "--suite", str(suite_file), "--json", str(out)])
    assert started.is_set()
    assert r.exit_code == 1, r.output
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "the figures above are distorted" in errors[0], r.stderr
    assert "behind model time" in errors[0] or "outside the server's own clock" in errors[0], errors[0]
    saved = json.loads(out.read_text())
    assert saved["complete"] is False and "distorted" in saved["error"]
    again = CliRunner().invoke(cli, ["bench", "--url", "http://127.0.0.1:9", "--suite", str(suite_file),
                                     "--compare", str(out)])
    assert again.exit_code == 2 and "no complete measurement" in again.output, again.output
