"""A tuner that keeps standing still stops its run with one line instead of measuring again without end.

Each measurement during which the tuner itself stood still is dropped and measured again (its
figures would hold the pause: ``tuner/engine/stall.py``); on a node that keeps pausing or starving it
(QA, qa223: a lone worker under ``faketime`` measured its baseline again and again, without end),
every retry cost a model load to be dropped again. After ``STALLS_IN_A_ROW`` (3) such measurements in
a row the run stops: one line naming what happened and the fix, exit 1, nothing failed or kept, and
the next run measures as usual.

Real parts: the tuner a real process, paused with real SIGSTOP/SIGCONT during each of its baseline's
suites (after the server's ready line, inside a suite of several seconds), its simulator real.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.demo_study import demo_study
from support.faults import fault_env, wait_for

SUITE = {"name": "slow", "prompts": [{"name": "p", "text": "Write a haiku about autumn leaves."}],
         "single": {"lengths": [128], "repeats": 1}, "sweep": {"concurrencies": [32], "max_tokens": 8},
         "warmup": {"requests": 1, "max_tokens": 2}, "timeout_s": 600, "ignore_eos": True}


def _server_ready(work, where: str, seen: set):
    """The pid of a server of ``where`` (``baseline`` or ``trials``), not in ``seen``, that said it is
    ready, else None. The baseline's launches append to one log (``work/baseline/server.log``): the
    k-th is ready at its k-th ready line; each trial has a log of its own."""
    for rec in (work / "servers").glob("*.json"):
        try:
            r = json.loads(rec.read_text())
        except (OSError, ValueError):
            continue
        if r.get("pid") in seen or f"/{where}/" not in r.get("log_path", ""):
            continue
        log = Path(r["log_path"])
        said = log.read_text(errors="replace").count("ready to roll") if log.exists() else 0
        if said > (len(seen) if where == "baseline" else 0):
            return r["pid"]
    return None


@pytest.mark.parametrize("where", ["baseline", "trials"])
def test_three_stalls_in_a_row_stop_the_run_with_one_line(tmp_path, where):
    # speedup 1: the single request's 128 tokens take about 5 s of each suite
    path = demo_study(tmp_path, "stalls", **{"bench.suite": SUITE, "budget.n_trials": 1, "server.sim.speedup": 1,
                                             "server.sim.load_seconds": 0.2})
    work = tmp_path / "work"
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tuner", "study", "run", str(path)], stdout=out,
                                stderr=subprocess.STDOUT, env=fault_env(TUNER_STALL_S="1"), cwd=tmp_path,
                                start_new_session=True)
    seen: set = set()
    try:
        for _ in range(3):
            pid = wait_for(lambda: _server_ready(work, where, seen), 120, f"a {where} server ready", [proc])
            seen.add(pid)
            time.sleep(2.0)  # the tuner has seen it ready (it polls each second): its suite has begun
            proc.send_signal(signal.SIGSTOP)
            time.sleep(2.5)
            proc.send_signal(signal.SIGCONT)
        assert proc.wait(timeout=120) == 1, log.read_text()[-3000:]
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert "Traceback" not in text, text
    stalled = "during the suite (paused, suspended or starved): its figures are not the server's; "
    if where == "baseline":
        assert text.count(stalled + "measuring it again") == 2, text
    else:
        assert text.count(stalled + "its setting is queued again") == 3, text
    what = "baseline measurements" if where == "baseline" else "trial measurements"
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(
        f"error: the tuner itself stood still during 3 {what} in a row (the last for "), errors
    assert "run again once the tuner runs steadily here" in errors[0], errors

    status = subprocess.run([sys.executable, "-m", "tuner", "study", "status", str(path), "-f", "json"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert status.returncode == 0, status.stderr
    shown = json.loads(status.stdout)
    ended = [t for t in shown["trials"] if t["state"] != "WAITING"]
    if where == "baseline":
        assert shown["baseline"] is None, status.stdout  # nothing kept of the three
        assert not ended, status.stdout  # nothing launched or failed
    else:  # the three dropped, each queued again; none measured, none failed
        assert shown["baseline"] is not None, status.stdout
        assert [t["status"] for t in ended] == ["interrupted"] * 3, status.stdout

    again = subprocess.run([sys.executable, "-m", "tuner", "study", "run", str(path)], cwd=tmp_path,
                           capture_output=True, text=True, timeout=300, env=fault_env())
    assert again.returncode == 0, again.stdout + again.stderr
    assert "1 measured" in again.stdout, again.stdout
