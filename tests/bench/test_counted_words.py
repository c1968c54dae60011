"""Counts in `tuner bench`'s lines take their noun's number (tuner.config.wording.counted): a suite of
one request said "every one of the 1 requests failed" and "1 answers cannot be true"; a hang rule
of one timed-out step "1 steps in a row timed out"."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.standin import running_standin
from test_bench_client import FakeSGLang

from tuner.bench import HangPolicy, ServerHungError, run_suite
from tuner.cli import cli

#: one request in all: one prompt, one length, once, no warm-up, no sweep
ONE = {"name": "one", "prompts": [{"name": "fib", "text": "def fib(n):"}],
       "single": {"lengths": [8], "repeats": 1}, "sweep": {"concurrencies": []},
       "warmup": {"requests": 0}, "timeout_s": 500}


def _bench(tmp_path, url: str):
    suite_file, out = tmp_path / "one.yaml", tmp_path / "out.json"
    suite_file.write_text(json.dumps(ONE))
    r = CliRunner().invoke(cli, ["bench", "--url", url, "--suite", str(suite_file), "--json", str(out)])
    assert r.exit_code == 1, r.output
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, r.stderr
    return errors[0], json.loads(out.read_text())


def test_one_answer_that_cannot_be_true_is_one_answer(tmp_path):
    with FakeSGLang(lie="more") as srv:
        error, saved = _bench(tmp_path, srv.url)
    assert error.startswith("error: 1 of 1 answer cannot be true (first: single fib at 8 tokens: "), error
    assert saved["error"].startswith("1 answer cannot be true; first: single fib"), saved["error"]


def test_the_one_request_of_a_suite_failing_is_one_request(tmp_path):
    from support.file_server import python_file_server

    with python_file_server(tmp_path) as url:  # POST is 501: no SGLang at all
        error, _ = _bench(tmp_path, url)
    assert error.startswith("error: every one of the 1 request failed; first: "), error


def test_one_timed_out_step_is_one_step():
    spec = ("--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
            "--speculative-num-draft-tokens", "4")
    one_step = HangPolicy(probe_interval_s=30, probe_timeout_s=5, silent_probes=2, timed_out_steps=1)
    with running_standin("wedge", *spec) as srv:
        with pytest.raises(ServerHungError) as err:
            run_suite(srv.url, {**ONE, "timeout_s": 2.0}, hang=one_step)
    assert "1 step in a row timed out with no answer" in str(err.value), str(err.value)


def test_one_token_is_one_token(tmp_path):
    """A request of ``max_tokens: 1`` (a suite may ask it) and an answer of one token: "at 1 tokens",
    "for 1 tokens", "(1 tokens)" before."""
    from tuner.bench.records import RequestRecord
    from tuner.results.traffic import lossless_line

    with FakeSGLang(lie="more") as srv:
        suite_file = tmp_path / "one.yaml"
        suite_file.write_text(json.dumps({**ONE, "single": {"lengths": [1], "repeats": 1}}))
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file)])
    assert r.exit_code == 1, r.output
    assert "(first: single fib at 1 token: completion_tokens 4, exactly 1 asked" in r.stderr, r.stderr
    record = RequestRecord("single", "fib", 1, end_s=0.5, ok=True, completion_tokens=1, server_latency_s=0.0)
    assert record.latency_problem() == "e2e_latency 0 for 1 token cannot be true"
    line = lossless_line({"lossless_compared": 2, "lossless_identical": 1, "lossless_share": 0.5,
                          "lossless_first_divergence": {"position": 0, "prompt": "fib", "max_tokens": 1}})
    assert "first divergence at character 0 of fib (1 token)" in line, line
