"""``tuner study report --png DIR`` killed while it draws (SIGKILL: no ``finally`` runs) leaves its
chart folder ``.tuner-report-HOST-PID-*`` in DIR; the next report into DIR removes it, as
tuner.config.files removes a dead writer's temporary file, and leaves a live report's alone.

QA, qa177: ``kill`` during ``report --png DIR`` left a hidden ``.tuner-report-*`` folder of
half-drawn charts in DIR, which no later report removed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from support.model_study import make_model_study
from support.processes import STARTED_GROUPS, finish, wait_until

from tuner.config.files import _host
from tuner.config.study import load_study
from tuner.engine.study import open_study
from tuner.results.report import write_report


def test_a_killed_report_s_chart_folder_goes_with_the_next_report(tmp_path):
    config = load_study(make_model_study(tmp_path, "kp", n_trials=4))
    png = tmp_path / "png"
    png.mkdir()
    cmd = [sys.executable, "-m", "tuner", "study", "report", "--storage", config.storage, "--study", "kp",
           "-o", str(tmp_path / "first.html"), "--png", str(png)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    STARTED_GROUPS.add(proc.pid)
    try:
        assert wait_until(lambda: any(p.name.startswith(".tuner-report-") for p in png.iterdir()), 120)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        finish(proc)
    left = [p.name for p in png.iterdir()]
    assert [n for n in left if n.startswith(".tuner-report-")] == left and left  # what the kill left
    live = png / f".tuner-report-{_host()}-{os.getpid()}-live"  # a report still drawing: this process
    live.mkdir()
    files = write_report(open_study("kp", config.storage), tmp_path / "second.html", png)
    assert sorted(p.name for p in png.iterdir()) == sorted([live.name, *(p.name for p in files.pngs)])
