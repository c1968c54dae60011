"""A trial whose server runs another SGLang release than the baseline's (an upgrade landed during the
night, between two runs of the study, or a worker's node runs another release): its speedups would
compare two releases, not its setting with autoregressive decoding (QA: a trial on 0.5.24 was read
against the 0.5.23 baseline, measured, and kept on the front). It fails as ``args_mismatch`` naming
both releases and the way on (``--rebaseline``); the run goes on, and a trial on the baseline's
release is measured. Real processes: `tuner study run` as a subprocess launching the stand-in
(``tests/support/changing_server.py``) on 127.0.0.1; real SQLite storage."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import optuna

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "support" / "changing_server.py"

STUDY = """
name: rel
search_space: {space}
server:
  backend: sim
  python: {python}
  model_path: standin/model
  draft_model_path: standin/draft
  startup_timeout_s: 60
  env: {{STANDIN_MODES: "2-1-3=release"}}
  sim: {{speedup: 20, load_seconds: 0}}
bench:
  suite:
    name: tiny
    prompts: [{{name: fib, text: "def fib(n):"}}]
    single: {{lengths: [16], repeats: 1}}
    sweep: {{concurrencies: [2], max_tokens: 16}}
    warmup: {{requests: 1, max_tokens: 4}}
    timeout_s: 5
objectives: [single_speedup, speedup@2]
default_seed_trials: false
seed_trials: [{{speculative_num_steps: 1, speculative_eagle_topk: 1, speculative_num_draft_tokens: 2}},
              {{speculative_num_steps: 2, speculative_eagle_topk: 1, speculative_num_draft_tokens: 3}}]
sampler: {{seed: 1}}
budget: {{n_trials: 2}}
"""


def test_a_trial_on_another_release_than_the_baseline_fails_and_the_run_goes_on(tmp_path):
    python = tmp_path / "python-changing"
    python.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SERVER}" "$@"\n')
    python.chmod(0o755)
    study = tmp_path / "rel.yaml"
    study.write_text(STUDY.format(space=ROOT / "search_spaces" / "eagle3.yaml", python=python))
    run = subprocess.run([sys.executable, "-m", "tuner", "study", "run", str(study)], capture_output=True,
                         text=True, timeout=300, cwd=tmp_path)
    out = run.stdout + run.stderr
    assert run.returncode == 0 and "Traceback" not in out, out
    assert "done: 1 measured, 0 pruned, 1 failed" in out, out

    s = optuna.load_study(study_name="rel", storage=f"sqlite:///{tmp_path / 'rel.db'}")
    by_key = {t.user_attrs["effective_key"]: t.user_attrs for t in s.trials}
    assert by_key["1-1-2"]["status"] == "measured", by_key["1-1-2"]
    failed = by_key["2-1-3"]
    assert failed["status"] == "failed" and failed["failure_class"] == "args_mismatch", failed
    assert ("the server runs SGLang '0.5.24+sim', the baseline was measured on '0.5.23+sim'"
            in failed["failure_message"]), failed["failure_message"]
    assert "tuner study run --rebaseline" in failed["failure_message"]
    # no figure of it is kept (not on the front, not exported); its suite result stays as evidence
    assert "single_speedup" not in failed and "single_tok_per_s" not in failed, failed
    assert Path(failed["suite_json"]).is_file()
