"""benchmarks/search_efficiency.py ``--strip-accept SHARE``: every landscape it runs, with the
``accept_length`` of that share of its rows removed (seeded by ``--strip-seed``), as a grid measured by
a benchmark that does not record it; the truth it is scored on is unchanged. The benchmark's ``main``
runs in this process (its flags and what its runs read are under test, not the process)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from test_search_efficiency import run  # the benchmark's main, in this process

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))


def _table(path: Path) -> Path:
    """Four measured rows with accept lengths, and one failed row."""
    rows = [(1, 1, 2, 1.7, 40.0), (2, 1, 3, 2.2, 50.0), (3, 1, 4, 2.6, 55.0), (4, 1, 5, 2.9, 52.0)]
    path.write_text(json.dumps({
        "name": "four-rows", "concurrency": 32,
        "baseline": {"single_tok_per_s": 30.0, "tok_per_s@32": 900.0},
        "configs": [{"num_steps": s, "eagle_topk": k, "num_draft_tokens": d, "accept_length": a,
                     "single_tok_per_s": v, "tok_per_s@32": 900.0 + v} for s, k, d, a, v in rows]
        + [{"num_steps": 5, "eagle_topk": 1, "num_draft_tokens": 6, "failure": "oom"}]}))
    return path


def _accepts(path: Path) -> list:
    return [row.get("accept_length") for row in json.loads(path.read_text())["configs"] if "failure" not in row]


def test_a_share_of_rows_is_stripped_seeded_and_the_truth_is_the_same(tmp_path):
    from searchbench.targets import strip_accept, table_target

    target = table_target(_table(tmp_path / "node.json"))
    cache = tmp_path / "cache"
    every = strip_accept(target, 1.0, 0, cache)
    assert _accepts(every.table) == [None] * 4
    half = strip_accept(target, 0.5, 0, cache)
    assert sum(a is None for a in _accepts(half.table)) == 2
    assert strip_accept(target, 0.5, 0, cache).table == half.table  # the same rows for the same seed
    assert {strip_accept(target, 0.5, seed, cache).table for seed in range(8)} != {half.table}  # seeded
    assert (every.name, every.group, every.family) == (target.name, target.group, target.family)
    assert every.truth().values == target.truth().values and _accepts(target.table) == [1.7, 2.2, 2.6, 2.9]


def test_the_flag_runs_the_stripped_tables_and_the_header_says_so(tmp_path):
    table = _table(tmp_path / "node.json")
    cache = tmp_path / "cache"
    done = run("--landscape", str(table), "--strategies", "random", "--seeds", "1", "--budget", "2",
               "--suite", "quick", "--cache", str(cache), "--strip-accept", "1")
    assert done.returncode == 0, done.stderr
    assert "accept_length stripped from 100% of rows (seed 0)" in done.stdout
    copies = list(cache.glob("four-rows-noaccept-*.json"))
    assert len(copies) == 1 and _accepts(copies[0]) == [None] * 4


def test_a_share_outside_0_to_1_is_one_line_naming_the_flag(tmp_path):
    done = run("--landscape", str(_table(tmp_path / "node.json")), "--cache", str(tmp_path / "cache"),
               "--strip-accept", "1.5")
    line = done.stderr.strip()
    assert done.returncode == 2 and done.stdout == "" and line.splitlines() == [line], done.stderr
    assert line.startswith("error: --strip-accept ") and line.endswith("got 1.5"), line
    assert not (tmp_path / "cache").exists()
