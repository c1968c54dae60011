"""The workload's statistics are those of the requests a measurement sends, and its line says how many
of the suite's requests that is (QA: a suite of 40 requests drawn from a file, with
``single.prompts: 2`` and a sweep up to C=8, sent 8 of them, and `tuner bench`, `status`, the
report and the export's header gave the lengths of all 40 as the workload). Checked against the
requests a run on the simulated server (a real process, real HTTP) records."""

from __future__ import annotations

import json

import pytest
from support.simproc import running_sim

from tuner.bench import run_suite
from tuner.bench.workload import sent_prompts, workload_line, workload_stats
from tuner.config.suite import load_suite

ROWS = [{"id": f"r{i}", "prompt": f"request number {i} " + "x" * (i * 20), "max_tokens": 4 + i} for i in range(40)]


def _suite(tmp_path, **extra):
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    return load_suite({"name": "forty", "dataset": {"path": "d.jsonl", "n": 40}, "warmup": {"requests": 0},
                       "timeout_s": 60, **extra}, tmp_path)


def test_the_statistics_are_of_the_requests_the_server_receives(tmp_path):
    suite = _suite(tmp_path, single={"prompts": 2, "repeats": 1}, sweep={"concurrencies": [4, 8]})
    with running_sim("--sim-noise", "0", speedup=100.0) as sim:
        res = run_suite(sim.url, suite, api="generate")
    assert res.complete and res.n_failed == 0
    received = {r.prompt for r in res.records}
    assert {p.name for p in sent_prompts(suite)} == received and len(received) == 8
    by_name = {r["id"]: r for r in ROWS}
    stats = workload_stats(suite)
    assert (stats["requests"], stats["sent"]) == (40, 8)
    # the sweep's lengths (each at its own max_tokens) and the prompts' characters: of the ones received
    swept = {r.prompt for r in res.records if r.phase == "sweep"}
    assert stats["output_tokens"]["max"] == max(by_name[n]["max_tokens"] for n in swept)
    assert stats["prompt_chars"]["max"] == max(len(by_name[n]["prompt"]) for n in received)
    assert workload_line(stats).startswith(
        "suite forty: dataset d.jsonl (jsonl), 40 drawn (n=40, seed 0), 8 of them sent (the single phase's first 2; "
        "a sweep batch of C sends the first C, up to 8); prompt chars ")


def test_single_requests_alone(tmp_path):
    stats = workload_stats(_suite(tmp_path, single={"prompts": 3}))
    assert (stats["requests"], stats["sent"]) == (40, 3)
    assert ", 40 drawn (n=40, seed 0), 3 of them sent (the single phase's first 3); " in workload_line(stats)


@pytest.mark.parametrize("extra", [{"single": {"prompts": 2}, "sweep": {"concurrencies": [40]}},
                                   {"single": {"prompts": 40}}])
def test_a_suite_that_sends_every_request_says_nothing_more(tmp_path, extra):
    stats = workload_stats(_suite(tmp_path, **extra))
    assert stats["sent"] == stats["requests"] == 40
    assert " 40 drawn (n=40, seed 0); prompt chars " in workload_line(stats)


def test_stats_stored_before_the_count_read_as_before():
    old = {"suite": "s", "source": {"kind": "inline"}, "requests": 5, "prompt_chars": {"p50": 1, "p90": 2, "p99": 3},
           "output_tokens": {"p50": 4, "p90": 5, "p99": 6}, "temperature": 0}
    assert workload_line(old) == "suite s: 5 inline prompts; prompt chars p50/p90/p99 1/2/3, output tokens 4/5/6; " \
                                 "temperature 0"
