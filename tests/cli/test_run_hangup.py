"""SIGHUP to `tuner study run` (the ssh session or terminal that started it closed): as SIGTERM, the
server is stopped, the trial under way queued again, one line said, exit 129 (128 + SIGHUP); under
`nohup` (SIGHUP ignored) the run is left to go on. Real processes, real signals.

QA: SIGHUP had its default action, which ended the tuner at once, silently, and left the trial's
server running (holding its GPUs) until the next run on that host found it.
"""

import json
import os
import signal
import subprocess
import sys

import optuna

from support.faults import study_file, trial_server_up, wait_for
from support.processes import signals_at_default
from tuner.server.procs import group_members, terminate_group


def test_sighup_stops_the_server_and_queues_the_trial_again(tmp_path):
    study = study_file(tmp_path, "hup", 3, storage="sqlite:///hup.db")
    workdir = tmp_path / "hup"
    out_path = tmp_path / "out.txt"
    with open(out_path, "w") as out:
        tuner = subprocess.Popen(signals_at_default([sys.executable, "-m", "tuner", "study", "run", str(study)]),
                                 stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path, start_new_session=True,
                                 env={**os.environ, "PYTHONUNBUFFERED": "1"})
    pgids: set[int] = set()
    try:
        trial = wait_for(lambda: trial_server_up(workdir), 180, "a trial's server", procs=[tuner])
        pgids = {json.loads(f.read_text())["pgid"] for f in (workdir / "servers").glob("*.json")}
        tuner.send_signal(signal.SIGHUP)
        assert tuner.wait(timeout=120) == 128 + signal.SIGHUP
        text = out_path.read_text()
        assert "SIGHUP: stopping the server" in text and "interrupted: the server is stopped" in text, text
        assert "Traceback" not in text, text
        assert not any(group_members(g) for g in pgids), "a server was left running"
        assert not list((workdir / "servers").glob("*.json"))
        s = optuna.load_study(study_name="hup", storage=f"sqlite:///{tmp_path / 'hup.db'}")
        trials = s.get_trials(deepcopy=False)
        assert trials[trial].state.name == "FAIL"
        assert [t for t in trials if t.state.name == "WAITING" and t.user_attrs.get("retry_of") == trial]
    finally:
        if tuner.poll() is None:
            terminate_group(tuner.pid, 5, leader=tuner)
        for g in pgids:
            if group_members(g):
                os.killpg(g, signal.SIGKILL)


def test_sighup_ignored_under_nohup_stays_ignored():
    """`nohup tuner study run ...` asks to outlive the terminal: the handlers leave SIGHUP ignored."""
    from tuner.server.signals import stop_on_signals

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        with stop_on_signals():
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        with stop_on_signals():
            assert signal.getsignal(signal.SIGHUP) not in (signal.SIG_DFL, signal.SIG_IGN)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_DFL
    finally:
        signal.signal(signal.SIGHUP, before)
