"""benchmarks/search_efficiency.py end to end with tiny settings: it runs the real study engine,
prints its table to stdout and progress to stderr, and refuses bad options with one line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "search_efficiency.py"


def run(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, check=False)


def test_tiny_run_prints_the_table(tmp_path):
    out = tmp_path / "runs.json"
    p = run("--profiles", "k2.6-tp8-pcie", "--strategies", "default,grid", "--seeds", "2", "--budget", "8",
            "--suite", "quick", "--json", str(out))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert any(line.startswith("## k2.6-tp8-pcie") for line in lines)
    rows = {line.split("|")[1].strip(): line for line in lines if line.startswith("| ")}
    assert set(rows) == {"strategy", "default", "grid"}
    assert "HV@8" in rows["strategy"] and "both by16" in rows["strategy"]
    # progress goes to stderr, one line per run, with the command
    assert p.stderr.count("k2.6-tp8-pcie default seed") == 2 and "command:" in p.stderr
    import json

    data = json.loads(out.read_text())
    runs = data["runs"]
    assert len(runs) == 4 and all(r["launches"] == 8 for r in runs)
    # the grid replays bench_speculative.py's order: its first config is steps=1 topk=1 draft=2,
    # which is also the speedup@32 optimum of this profile (the article's setting)
    grid = [r for r in runs if r["strategy"] == "grid"]
    assert all(r["launches_to"][1] == 1 for r in grid)
    assert all(0 < r["hv_frac"]["8"] <= 1.0 + 1e-9 for r in runs)


def test_unknown_strategy_is_one_line_and_exit_2():
    p = run("--strategies", "default,simulated-annealing", "--seeds", "1")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [p.stderr.strip()]
    assert "simulated-annealing" in p.stderr and "default" in p.stderr


def test_bad_profile_is_a_config_error():
    p = run("--profiles", str(ROOT / "no-such-profile.yaml"), "--seeds", "1")
    assert p.returncode == 2
    assert "no-such-profile.yaml" in p.stderr and "Traceback" not in p.stderr


def test_grid_mirrors_bench_speculative_defaults():
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import search_efficiency as se
    finally:
        sys.path.remove(str(SCRIPT.parent))
    grid = se.bench_speculative_grid()
    # steps (1, 3, 5, 7) x topk (1, 2, 4, 8) x draft (2, 4, 8, 16, 32), trees within steps*topk+1
    assert len(grid) == 47
    assert grid[:6] == [(1, 1, 2), (1, 2, 2), (1, 4, 2), (1, 4, 4), (1, 8, 2), (1, 8, 4)]
    assert grid[-1] == (7, 8, 32)
    assert all(s * k + 1 >= d for s, k, d in grid)
    assert se.grid_launches(se.SPACE) == 43  # topk 1 rows SGLang rewrites to the same chain are reused
