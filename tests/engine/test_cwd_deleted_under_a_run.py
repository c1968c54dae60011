"""The folder a run was started in, deleted while it runs (a job's scratch folder cleaned, a checkout
moved): the study file and workdir are elsewhere, so the run goes on and measures every launch.

QA (qa217): the next launch ended the run in ``FileNotFoundError`` from ``Path.cwd()`` (the launcher's
check whether the tuner runs from a checkout in the working folder), its trial queued again.
A real ``tuner study run`` process, its working folder removed once the baseline is launching.
"""

from __future__ import annotations

import json
import subprocess
import sys

from support.demo_study import demo_study

SUITE = {"name": "small", "prompts": [{"name": "p", "text": "Write a haiku about autumn leaves."}],
         "single": {"lengths": [16], "repeats": 1}, "sweep": {"concurrencies": [1, 32], "max_tokens": 16},
         "warmup": {"requests": 1, "max_tokens": 4}, "timeout_s": 300, "ignore_eos": True}


def test_a_run_whose_working_folder_is_deleted_measures_on(tmp_path):
    path = demo_study(tmp_path, "cwd", **{"bench.suite": SUITE, "budget.n_trials": 1, "server.sim.speedup": 50})
    here = tmp_path / "scratch"
    here.mkdir()
    lines = []
    with subprocess.Popen([sys.executable, "-m", "tuner", "study", "run", str(path)], cwd=here,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as run:
        try:
            for line in run.stdout:
                lines.append(line)
                if "baseline (autoregressive): launching" in line:
                    here.rmdir()  # the trial's launch comes after this
            assert run.wait(timeout=300) == 0, "".join(lines)
        finally:
            if run.poll() is None:
                run.kill()
    assert not here.exists(), "".join(lines)
    assert "Traceback" not in "".join(lines), "".join(lines)
    status = subprocess.run([sys.executable, "-m", "tuner", "study", "status", str(path), "-f", "json"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert status.returncode == 0, status.stderr
    trials = json.loads(status.stdout)["trials"]
    assert [t["status"] for t in trials if t["state"] != "WAITING"] == ["measured"], trials
