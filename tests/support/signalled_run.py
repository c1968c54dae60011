"""A real `tuner study run` sent a signal while a trial's server is up, and what every stopping
signal must leave (tuner.server.signals.stop_on_signals): exit 128 + the signal, the notice and the
``interrupted`` line, no traceback, no server or server record left, the trial FAIL and its setting
queued again. Shared by the SIGHUP and SIGUSR1 tests."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys

import optuna

from support.faults import study_file, trial_server_up, wait_for
from support.processes import signals_at_default
from tuner.server.procs import group_members, terminate_group


def signal_mid_trial(tmp_path, name: str, sig: signal.Signals) -> tuple[list, int]:
    """Run a three-trial simulator study named ``name`` in ``tmp_path``, send ``sig`` to the tuner
    once a trial's server is up, check the stop as the module docstring says; returns the study's
    trials and the interrupted trial's number. Nothing is left running, whatever fails."""
    study = study_file(tmp_path, name, 3, storage=f"sqlite:///{name}.db")
    workdir = tmp_path / name
    out_path = tmp_path / "out.txt"
    with open(out_path, "w") as out:
        tuner = subprocess.Popen(signals_at_default([sys.executable, "-m", "tuner", "study", "run", str(study)]),
                                 stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path, start_new_session=True,
                                 stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    pgids: set[int] = set()
    try:
        trial = wait_for(lambda: trial_server_up(workdir), 180, "a trial's server", procs=[tuner])
        pgids = {json.loads(f.read_text())["pgid"] for f in (workdir / "servers").glob("*.json")}
        tuner.send_signal(sig)
        assert tuner.wait(timeout=120) == 128 + sig
        text = out_path.read_text()
        assert f"{sig.name}: stopping the server" in text and "interrupted: the server is stopped" in text, text
        assert "Traceback" not in text, text
        assert not any(group_members(g) for g in pgids), "a server was left running"
        assert not list((workdir / "servers").glob("*.json"))
        trials = optuna.load_study(study_name=name, storage=f"sqlite:///{tmp_path / f'{name}.db'}").get_trials(
            deepcopy=False)
        assert trials[trial].state.name == "FAIL"
        assert [t for t in trials if t.state.name == "WAITING" and t.user_attrs.get("retry_of") == trial]
        return trials, trial
    finally:
        if tuner.poll() is None:
            terminate_group(tuner.pid, 5, leader=tuner)
        for g in pgids:
            if group_members(g):
                os.killpg(g, signal.SIGKILL)
