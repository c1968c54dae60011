"""Pruning on the real path: `tuner study run` against the simulated SGLang server (real processes,
real HTTP on 127.0.0.1, real SQLite). A dominated trial stops its suite after a stage (the probe,
unless a loaded machine makes the short requests so noisy that the decision waits) and its server is
stopped; the baseline and every trial send the same requests in the same order up to that point."""

import json
import subprocess
import sys
from pathlib import Path

import optuna

ROOT = Path(__file__).resolve().parents[2]

STUDY = f"""
name: staged
search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  startup_timeout_s: 60
  stop_grace_s: 5
  sim: {{profile: k2.6-tp8-pcie, speedup: 25, load_seconds: 0.2, noise: 0.01, seed: 1}}
bench:
  suite:
    name: staged
    prompts:
      - {{name: fib, text: "Write a Python function that returns the n-th Fibonacci number."}}
      - {{name: haiku, text: "Write a haiku about autumn leaves falling in the rain."}}
    single: {{lengths: [96, 192], repeats: 2}}
    sweep: {{concurrencies: [1, 8, 32], max_tokens: 128}}
    warmup: {{requests: 1, max_tokens: 4}}
    timeout_s: 120                   # model seconds: a loaded machine must not time a request out
default_seed_trials: false
seed_trials:   # SGLang's own choice, then a wide shallow tree it beats on both objectives by far
  - {{speculative_num_steps: 3, speculative_eagle_topk: 1, speculative_num_draft_tokens: 4}}
  - {{speculative_num_steps: 1, speculative_eagle_topk: 8, speculative_num_draft_tokens: 8}}
budget: {{n_trials: 2, prune: {{startup_trials: 1}}}}
"""


def _order(path: Path) -> list[tuple]:
    records = json.loads(path.read_text())["records"]
    return [(r["phase"], r["prompt"], r["max_tokens"], r["repeat"], r["concurrency"]) for r in records
            if r["phase"] != "sweep" or r["index"] == 0]


def test_a_dominated_trial_stops_its_suite_and_its_server(tmp_path):
    (tmp_path / "staged.yaml").write_text(STUDY)
    run = subprocess.run([sys.executable, "-m", "tuner", "study", "run", str(tmp_path / "staged.yaml")],
                         capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "done: 1 measured, 1 pruned" in run.stdout

    study = optuna.load_study(study_name="staged", storage=f"sqlite:///{tmp_path / 'staged.db'}")
    first, second = study.trials
    assert first.state.name == "COMPLETE" and second.state.name == "PRUNED"
    stage = second.user_attrs["pruned_at"]
    assert stage in ("probe", "single 1/2", "single 2/2") and second.user_attrs["pruned_by"] == 0
    assert f"trial 1: pruned (after {stage}; trial 0 dominates it)" in run.stdout
    assert len(second.intermediate_values) == 2 * len(second.user_attrs["stages"])

    workdir = tmp_path / "staged"
    partial = json.loads((workdir / "trials" / "1" / "suite.json").read_text())
    assert partial["stopped_after"] == stage and not partial["complete"]
    base, whole, pruned = (_order(workdir / p / "suite.json") for p in ("baseline", "trials/0", "trials/1"))
    # one request per prompt at its shortest length, then the objective's batch (C=32), first, in
    # the same order for the baseline and both trials; the pruned trial measured nothing more
    probe = [("warmup", "fib", 4, 0, 1), ("single", "fib", 96, 0, 1), ("single", "haiku", 96, 0, 1),
             ("sweep", "fib", 128, 0, 32)]
    assert base[:4] == whole[:4] == pruned[:4] == probe
    assert base == whole and len(base) == 1 + 8 + 3
    assert pruned == base[:len(pruned)] and len(pruned) == {"probe": 4, "single 1/2": 6, "single 2/2": 10}[stage]
    # the server of the pruned trial was stopped like any other: nothing left running or recorded
    assert not list((workdir / "servers").glob("*.json"))
    log = (workdir / "trials" / "1" / "server.log").read_text()
    assert "Received SIGTERM" in log and "# tuner: stopped" in log
