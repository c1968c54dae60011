"""A server whose ``/server_info`` changes between the start and the end of a suite: another process
answering on the port mid-suite (a supervisor's restart with other arguments), or a server that
changed what it runs. ``tuner bench`` and a study read ``/server_info`` at the start only (QA: a
server that said ``3-1-4`` at the start and ``4-1-4`` at the end was measured, its table headed
``3-1-4``, exit 0; in a study the trial was verified against the start's flags). The runner reads it
again after the last phase; a change of model, speculative flags, version or time scale fails
``tuner bench`` (exit 1, one line naming the key) and a trial (``args_mismatch``); what SGLang
changes while it runs (``internal_states``' throughput, ``sim_timekeeping``) does not.
A real server process on 127.0.0.1 (``tests/support/changing_server.py``)."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.cli_in_process import tuner_here

from tuner.bench import run_suite
from tuner.config.study import load_study
from tuner.engine.verify import verify_result
from tuner.sglang.rules import SpecConfig

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "support" / "changing_server.py"
SPEC_ARGS = ("--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3", "--speculative-eagle-topk",
             "1", "--speculative-num-draft-tokens", "4")
#: a few requests, each a few wall milliseconds at --sim-speedup 20
SUITE = """name: tiny
prompts: [{name: fib, text: Write fib.}, {name: json, text: Emit JSON.}]
single: {lengths: [16], repeats: 2}
sweep: {concurrencies: [2], max_tokens: 16}
warmup: {requests: 1, max_tokens: 4}
timeout_s: 60
"""


@contextlib.contextmanager
def changing_server(tmp_path: Path, change: str, after: int = 1, spec: bool = True):
    log_path = tmp_path / f"server-{change}.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen([sys.executable, str(SERVER), "--host", "127.0.0.1", "--port", "0",
                                 "--sim-speedup", "20", *(SPEC_ARGS if spec else ())],
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True,
                                env={**os.environ, "CHANGE": change, "CHANGE_AFTER": str(after)})
    try:
        deadline = time.monotonic() + 30
        while not (m := re.search(r"listening on (http://127\.0\.0\.1:\d+)", log_path.read_text())):
            assert proc.poll() is None and time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.05)
        yield m.group(1)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)


@pytest.fixture
def suite_file(tmp_path):
    p = tmp_path / "tiny.yaml"
    p.write_text(SUITE)
    return p


@pytest.mark.parametrize("change, said", [
    ("spec", "speculative_num_steps 3 at its start, 4 at its end"),
    ("model", "model_path 'standin/model' at its start, 'other/model' at its end"),
    ("scale", "sim_speedup 20.0 at its start, 40.0 at its end"),
    ("autoregressive", "speculative_algorithm 'EAGLE3' at its start, None at its end"),
])
def test_bench_fails_a_suite_whose_server_changed(tmp_path, suite_file, change, said):
    out = tmp_path / "r.json"
    with changing_server(tmp_path, change) as url:
        res = tuner_here("bench", "--url", url, "--suite", str(suite_file), "--json", str(out))
    assert res.exit_code == 1, (res.stdout, res.stderr)
    errors = [line for line in res.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "/server_info changed during the suite" in errors[0] and said in errors[0], \
        res.stderr
    saved = out.read_text()
    assert '"complete": false' in saved and "server_info_after" in saved  # never a --compare baseline


def test_bench_keeps_a_server_whose_live_state_alone_changed(tmp_path, suite_file):
    with changing_server(tmp_path, "live") as url:
        res = tuner_here("bench", "--url", url, "--suite", str(suite_file))
    assert res.exit_code == 0, (res.stdout, res.stderr)
    assert "error" not in res.stderr, res.stderr


@pytest.fixture
def config(tmp_path):
    p = tmp_path / "v.yaml"
    p.write_text(f"name: v\nsearch_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}\n"
                 "server: {backend: sim, model_path: standin/model, sim: {speedup: 20}}\n"
                 "bench: {suite: quick}\n")
    return load_study(p)


@pytest.mark.parametrize("change, spec", [("spec", SpecConfig(3, 1, 4)), ("model", None)])
def test_a_trial_or_baseline_whose_server_changed_is_args_mismatch(tmp_path, suite_file, config, change, spec):
    with changing_server(tmp_path, change, spec=spec is not None) as url:
        result = run_suite(url, str(suite_file))
    failure = verify_result(result, spec, config, "EAGLE3")
    assert failure is not None and failure[0] == "args_mismatch", failure
    assert "/server_info changed during the suite" in failure[1], failure


def test_an_unchanged_server_passes(tmp_path, suite_file, config):
    with changing_server(tmp_path, "live") as url:
        result = run_suite(url, str(suite_file))
    assert result.server_info_after is not None
    assert verify_result(result, SpecConfig(3, 1, 4), config, "EAGLE3") is None
