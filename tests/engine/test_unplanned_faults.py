"""Faults the fault campaign did not plan for, inflicted on real parts: ``tuner study run`` as a
subprocess, the simulator it launches on 127.0.0.1, real SIGSTOP/SIGCONT.

* the tuner itself paused for a few seconds (under ``TUNER_STALL_S``, under the hang rules) while the
  baseline's single requests run: the answers wait, unread, outside the server's clock, and the
  baseline would read slow (QA: 20.9 instead of 26.2 tok/s, a trial's single speedup 2.87 instead
  of 2.29 kept on the front). The measurement fails instead (``bad_response``, the wait named).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import optuna
from support.processes import finish

ROOT = Path(__file__).resolve().parents[2]

STUDY = """
name: {name}
search_space: {space}
storage: sqlite:///{folder}/{name}.db
workdir: {folder}/work
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  startup_timeout_s: 60
  stop_grace_s: 10
  sim: {{profile: k2.6-tp8-pcie, speedup: 5, load_seconds: 0, noise: 0.0, seed: 1}}
bench:
  suite:
    name: tiny
    prompts: [{{name: fib, text: "def fib(n):"}}, {{name: haiku, text: "autumn leaves"}}]
    single: {{lengths: [256], repeats: 2}}
    sweep: {{concurrencies: [1], max_tokens: 64}}
    warmup: {{requests: 1, max_tokens: 4}}
    timeout_s: 300
objectives: [single_speedup, speedup@1]
default_seed_trials: false
seed_trials: [{{speculative_num_steps: 3, speculative_eagle_topk: 1, speculative_num_draft_tokens: 4}}]
budget: {{n_trials: 1}}
"""


def write_study(folder: Path, name: str = "paused") -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(STUDY.format(name=name, folder=folder, space=ROOT / "search_spaces" / "eagle3.yaml"))
    return path


def wait_for_text(path: Path, text: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.02)
    raise AssertionError(f"{text!r} never appeared in {path}")


def test_tuner_paused_during_the_baseline_single_requests_fails_the_baseline(tmp_path):
    study = write_study(tmp_path)
    log = tmp_path / "work" / "baseline" / "server.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("TUNER_STALL_S", None)  # the default 15 s: this pause is shorter, the watch does not see it
    run = subprocess.Popen([sys.executable, "-m", "tuner", "study", "run", str(study)], cwd=tmp_path, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # The cache is flushed after the warm-up; the single requests (about 2 s wall each) follow at once.
        wait_for_text(log, "Cache flushed")
        time.sleep(0.5)
        os.kill(run.pid, signal.SIGSTOP)
        time.sleep(5)
        os.kill(run.pid, signal.SIGCONT)
        out, _ = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            os.kill(run.pid, signal.SIGCONT)
        finish(run)
    assert "Traceback" not in out, out
    # the baseline cannot be trusted: the run stops with one line naming the wait, nothing is measured
    assert run.returncode == 1, out
    assert "the autoregressive baseline failed (bad_response)" in out, out
    assert "outside the server's own clock" in out, out
    s = optuna.load_study(study_name="paused", storage=f"sqlite:///{tmp_path / 'paused.db'}")
    assert not [t for t in s.trials if t.state.name == "COMPLETE"], [t.user_attrs for t in s.trials]
    base = optuna.load_study(study_name="paused.baseline", storage=f"sqlite:///{tmp_path / 'paused.db'}")
    assert all(t.user_attrs.get("status") != "measured" for t in base.trials)
    # its server was stopped (no orphan); the evidence kept beside its log
    assert "# tuner: stopped" in log.read_text()
    assert not list((tmp_path / "work" / "servers").glob("*.json"))
