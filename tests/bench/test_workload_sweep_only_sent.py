"""A suite that sends no single request (``single: {lengths: []}``) and sweeps fewer requests than it
draws says how many are sent by its sweep alone (tuner/bench/workload.py, ``sent_note``; the status line,
`tuner bench`, the export's header and the report's workload table read it). QA (qa152): 40 drawn, a
sweep up to C=8, no single phase: "8 of them sent (the single phase's first 0; a sweep batch of C sends
the first C, up to 8)". In-process: the line is the unit under test."""

from __future__ import annotations

import json

from tuner.bench.workload import workload_line, workload_stats
from tuner.config.suite import load_suite


def _stats(tmp_path, **extra):
    rows = (json.dumps({"prompt": f"request {i}"}) + "\n" for i in range(40))
    (tmp_path / "d.jsonl").write_text("".join(rows))
    suite = load_suite({"name": "forty", "dataset": {"path": "d.jsonl", "n": 40}, **extra}, tmp_path)
    return workload_stats(suite)


def test_a_sweep_only_suite_names_no_single_phase(tmp_path):
    stats = _stats(tmp_path, single={"lengths": []}, sweep={"concurrencies": [8, 2]})
    assert (stats["sent"], stats["single_prompts_sent"]) == (8, 0)
    line = workload_line(stats)
    said = ", 40 drawn (n=40, seed 0), 8 of them sent (a sweep batch of C sends the first C, up to 8); "
    assert said in line
    assert "single phase" not in line


def test_the_single_phase_is_still_named_when_it_sends(tmp_path):
    line = workload_line(_stats(tmp_path, single={"prompts": 2}, sweep={"concurrencies": [8]}))
    said = "8 of them sent (the single phase's first 2; a sweep batch of C sends the first C, up to 8)"
    assert said in line
