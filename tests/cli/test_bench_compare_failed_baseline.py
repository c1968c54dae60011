"""`tuner bench --compare BASE.json` refuses a baseline some of whose requests failed or timed out.

Such a run exits 1 but saves ``"complete": true`` with figures that leave the failed requests out
(QA: the simulator at --context-length 256, a suite whose 300-token rows fail with SGLang's HTTP
400; the saved result was taken as a baseline, every row compared at 1.00x). Measured against the
real simulator, as a user would."""

from __future__ import annotations

import json

from click.testing import CliRunner
from support.simproc import running_sim

from tuner.bench import SuiteResult
from tuner.cli import cli

SUITE = {
    "name": "overflowing",
    "prompts": [{"name": "fib", "text": "Write a Python function that returns the n-th Fibonacci number."}],
    # 250 tokens and the prompt's are over the server's 256-token context: SGLang's HTTP 400 (250 alone is
    # not: a suite whose max_tokens alone is over it is refused before any request, tuner.bench.context)
    "single": {"lengths": [16, 250], "repeats": 1},
    "sweep": {"concurrencies": [1], "max_tokens": 16},
    "warmup": {"requests": 1, "max_tokens": 4},
    "timeout_s": 120,
}


def _measured(tmp_path, suite: dict):
    """`tuner bench --json` of ``suite`` against the simulator with a 256-token context: the suite
    file, the JSON and the run."""
    suite_file, out = tmp_path / "s.json", tmp_path / "base.json"
    suite_file.write_text(json.dumps(suite))
    with running_sim("--context-length", "256", "--sim-noise", "0", speedup=50) as sim:
        argv = ["bench", "--url", sim.url, "--suite", str(suite_file), "--json", str(out)]
        r = CliRunner().invoke(cli, argv)
    return suite_file, out, r


def test_a_baseline_with_failed_requests_is_refused_before_any_request(tmp_path):
    suite_file, base, r = _measured(tmp_path, SUITE)
    assert r.exit_code == 1 and "1 of 4 requests failed or timed out" in r.stderr, r.output
    saved = SuiteResult.load(base)
    assert saved.complete and saved.n_failed == 1  # what the file says: complete, one request failed
    # no server listens on port 9: the refusal comes before any request
    again = CliRunner().invoke(cli, ["bench", "--url", "http://127.0.0.1:9", "--suite", str(suite_file),
                                     "--compare", str(base)])
    assert again.exit_code == 2, again.output
    lines = again.stderr.splitlines()
    assert len(lines) == 1 and again.stdout == "", again.output
    assert lines[0].startswith(f"error: --compare: {base} has 1 of 4 requests failed or timed out (first: "
                               "single fib at 250 tokens: HTTP 400: "), lines[0]
    assert lines[0].endswith("its figures leave them out; measure the baseline again with every request "
                             "answered"), lines[0]


def test_a_baseline_whose_requests_all_answered_is_compared(tmp_path):
    suite_file, base = tmp_path / "s.json", tmp_path / "base.json"
    suite_file.write_text(json.dumps({**SUITE, "single": {"lengths": [16], "repeats": 1}}))
    with running_sim("--context-length", "256", "--sim-noise", "0", speedup=50) as sim:
        r = CliRunner().invoke(cli, ["bench", "--url", sim.url, "--suite", str(suite_file),
                                     "--json", str(base)])
        assert r.exit_code == 0, r.output
        again = CliRunner().invoke(cli, ["bench", "--url", sim.url, "--suite", str(suite_file),
                                         "--compare", str(base)])
    assert again.exit_code == 0 and "speedup" in again.stdout, again.output


def test_a_long_json_error_body_is_kept_as_its_whole_message(tmp_path):
    # QA: SGLang's OpenAI-style context message (some 290 characters) in its JSON body was cut at 300
    # characters with the body, so no JSON was left to read it from: the error line quoted '{"error":
    # {"message": "Requested ... to fit' and stopped mid-sentence
    _, out, r = _measured(tmp_path, SUITE)
    assert r.exit_code == 1, r.output
    error = next(rec.error for rec in SuiteResult.load(out).records if not rec.ok)
    assert error.startswith("HTTP 400: Requested token count exceeds the model's maximum context length of "
                            "256 tokens.") and error.endswith("to fit within the limit."), error
    assert r.stderr.strip().endswith(f"first: single fib at 250 tokens: {error}"), r.stderr
