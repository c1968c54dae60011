"""SIGUSR1 and SIGUSR2 to `tuner study run`: what a batch scheduler sends ahead of a job's time limit
(Slurm's `sbatch --signal=USR1@120`, `scancel --signal=USR1`). As SIGTERM: the server is stopped, the
trial under way queued again, one line said, exit 128 + the signal. Real processes, real signals.

QA (qa180): both kept their default action, which ended the tuner at once (exit 138), silently: the
trial under way was left RUNNING until the next run on that host reaped it, its server ended only by
its parent-death signal; run as PID 1 (a container), the signals were ignored instead.
"""

import json
import os
import signal
import subprocess
import sys

import optuna
import pytest

from support.faults import study_file, trial_server_up, wait_for
from support.processes import signals_at_default
from tuner.server.procs import group_members, terminate_group
from tuner.server.signals import stop_on_signals


def test_sigusr1_stops_the_server_and_queues_the_trial_again(tmp_path):
    study = study_file(tmp_path, "usr", 3, storage="sqlite:///usr.db")
    workdir = tmp_path / "usr"
    out_path = tmp_path / "out.txt"
    with open(out_path, "w") as out:
        tuner = subprocess.Popen(signals_at_default([sys.executable, "-m", "tuner", "study", "run", str(study)]),
                                 stdout=out, stderr=subprocess.STDOUT, cwd=tmp_path, start_new_session=True,
                                 stdin=subprocess.DEVNULL, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    pgids: set[int] = set()
    try:
        trial = wait_for(lambda: trial_server_up(workdir), 180, "a trial's server", procs=[tuner])
        pgids = {json.loads(f.read_text())["pgid"] for f in (workdir / "servers").glob("*.json")}
        tuner.send_signal(signal.SIGUSR1)
        assert tuner.wait(timeout=120) == 128 + signal.SIGUSR1
        text = out_path.read_text()
        assert "SIGUSR1: stopping the server" in text and "interrupted: the server is stopped" in text, text
        assert "Traceback" not in text, text
        assert not any(group_members(g) for g in pgids), "a server was left running"
        assert not list((workdir / "servers").glob("*.json"))
        s = optuna.load_study(study_name="usr", storage=f"sqlite:///{tmp_path / 'usr.db'}")
        trials = s.get_trials(deepcopy=False)
        assert trials[trial].state.name == "FAIL"
        assert trials[trial].user_attrs.get("status") == "interrupted"
        assert not [t for t in trials if t.state.name == "RUNNING"]
        assert [t for t in trials if t.state.name == "WAITING" and t.user_attrs.get("retry_of") == trial]
    finally:
        if tuner.poll() is None:
            terminate_group(tuner.pid, 5, leader=tuner)
        for g in pgids:
            if group_members(g):
                os.killpg(g, signal.SIGKILL)


@pytest.mark.parametrize("sig", [signal.SIGUSR1, signal.SIGUSR2])
def test_sigusr_at_its_default_action_raises_as_sigterm_does(sig):
    before = signal.signal(sig, signal.SIG_DFL)
    try:
        with pytest.raises(SystemExit) as caught:
            with stop_on_signals():
                # checked first: at its default action the signal would end this test process
                assert signal.getsignal(sig) not in (signal.SIG_DFL, signal.SIG_IGN), "no handler installed"
                signal.raise_signal(sig)
        assert caught.value.code == 128 + sig
        assert signal.getsignal(sig) is signal.SIG_DFL  # put back as it was
    finally:
        signal.signal(sig, before)


@pytest.mark.parametrize("sig", [signal.SIGUSR1, signal.SIGUSR2])
def test_sigusr_ignored_or_handled_by_the_caller_is_left_alone(sig):
    def theirs(signum, frame):
        pass

    before = signal.getsignal(sig)
    try:
        for disposition in (signal.SIG_IGN, theirs):
            signal.signal(sig, disposition)
            with stop_on_signals():
                assert signal.getsignal(sig) is disposition
                signal.raise_signal(sig)  # no exception: theirs, or ignored
            assert signal.getsignal(sig) is disposition
    finally:
        signal.signal(sig, before)
