"""Issue 15's done-when, on the simulator: a study of the (MLA) K2.6 profile on flashinfer launches
no tree and says so once; the same study on fa3 searches trees. Real `tuner study run` processes,
real simulated servers, real SQLite."""

import subprocess
import sys
from pathlib import Path

import optuna
import pytest
from support.demo_study import demo_study

from tuner.engine.records import load_records
from tuner.engine.study import open_study

#: a small suite: one prompt, two concurrencies (the objectives follow it)
TINY = {"name": "tiny", "prompts": [{"name": "fib", "text": "Write a Python function that returns the n-th "
                                                          "Fibonacci number."}],
        "single": {"lengths": [32], "repeats": 1}, "sweep": {"concurrencies": [1, 4], "max_tokens": 16},
        "warmup": {"requests": 1, "max_tokens": 4}, "timeout_s": 30}


def _run_study(tmp_path: Path, name: str, backend: str) -> tuple[str, list]:
    path = demo_study(tmp_path, name, **{
        "server.args": {"attention_backend": backend}, "server.stop_grace_s": 5,
        "server.sim": {"profile": "k2.6-tp8-pcie", "speedup": 200, "load_seconds": 0.1, "noise": 0.01, "seed": 1},
        "bench.suite": TINY, "objectives": ["single_speedup", "speedup@4"], "sampler": {"seed": 3},
        # 3 trials: the default seeds come first, (3, 1, 4) then the trees (4, 8, 64) and (2, 4, 8)
        # (tuner/engine/seeds.py), so fa3 launches two trees (one may fail on a loaded machine) and a
        # flashinfer space that kept its trees would launch (4, 8, 64) as its second trial
        "budget": {"n_trials": 3}})
    r = subprocess.run([sys.executable, "-m", "tuner", "study", "run", str(path)], capture_output=True,
                       text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    records = load_records(open_study(name, f"sqlite:///{tmp_path / (name + '.db')}"))
    launched = [rec for rec in records if rec.status in ("measured", "failed")]
    assert launched, r.stdout + r.stderr
    for rec in launched:  # every launch carried the study's backend
        log = Path(rec.attrs["log_path"]).read_text()
        assert f"--attention-backend {backend}" in log
    return r.stdout + r.stderr, launched


@pytest.mark.parametrize("backend,trees", [("flashinfer", False), ("fa3", True)])
def test_k26_study_searches_trees_only_where_the_backend_runs_them(tmp_path, backend, trees):
    out, launched = _run_study(tmp_path, f"k26-{backend}", backend)
    topks = {rec.effective.eagle_topk for rec in launched}
    no_trees_line = "search space without trees: attention backend flashinfer runs topk 1 only"
    if trees:
        assert max(topks) > 1, topks
        assert no_trees_line not in out
        # fa3 runs trees: some measured, none refused by the server (a trial failed by the load of a
        # shared machine, e.g. a simulator fallen behind its clock, is no verdict on the backend)
        seen = [(rec.effective.label(), rec.status, rec.attrs.get("failure_class")) for rec in launched]
        assert any(rec.status == "measured" and rec.effective.eagle_topk > 1 for rec in launched), seen
        assert not [s for s in seen if s[2] in ("invalid_args", "spec_runtime")], seen
    else:
        assert topks == {1}, topks
        assert out.count(no_trees_line) == 1, out
