"""A worker of this host name in another PID namespace is judged by its heartbeat, not by its pid.

QA (qa180): containers that share the node's host name (Kubernetes ``hostNetwork: true``, ``docker
run --network host``) each number their processes from 1. Two workers started under ``unshare
--pid --fork --mount-proc`` on one host each read the other's pid in their own namespace, found no
such process (or another one), and failed the other's live trial as "left running by a dead worker":
both settings were queued again and measured twice. The worker now records its PID namespace, and a
reaper in another one asks the heartbeat.

The other worker is real: a process in a new PID namespace (``unshare``, as root: CI runs so) that
records its trial's worker as the tuner does and beats for it until told to stop.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap

import optuna
from optuna.distributions import IntDistribution
from optuna.trial import TrialState

from tuner.engine.asktell import ask
from tuner.engine.storage import open_storage
from tuner.engine.workers import Worker, reap_dead_trials

DIST = {"x": IntDistribution(0, 9)}

#: The other worker: names itself on trial 0 (as start_trial does), beats, says "ready", waits for stdin.
OTHER = textwrap.dedent("""
    import sys
    import optuna
    from tuner.engine.storage import open_storage
    from tuner.engine.workers import Heartbeat, Worker

    study = optuna.load_study(study_name="ns", storage=open_storage(sys.argv[1], patient=True))
    (trial,) = study.get_trials(deepcopy=False)
    study._storage.set_trial_user_attr(trial._trial_id, "worker", Worker().as_dict())
    with Heartbeat(study._storage, trial._trial_id):
        print("ready", flush=True)
        sys.stdin.read()
""")


def test_a_live_worker_in_another_pid_namespace_is_not_reaped(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    study = optuna.create_study(study_name="ns", storage=open_storage(url, patient=True))
    study.enqueue_trial({"x": 3})
    ask(study, DIST)
    other = subprocess.Popen(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", OTHER, url],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert other.stdout.readline().strip() == "ready"
        (trial,) = study.get_trials(deepcopy=False)
        named = trial.user_attrs["worker"]
        assert named["host"] == socket.gethostname() and named["pidns"] != Worker().pidns
        assert Worker.alive(named) is False  # its pid, looked up here, names no such process
        assert reap_dead_trials(study) == []
        assert study.get_trials(deepcopy=False)[0].state == TrialState.RUNNING
    finally:
        other.stdin.close()
        other.wait(timeout=60)
        other.stdout.close()


def test_a_worker_of_a_tuner_that_recorded_no_namespace_is_judged_by_its_pid(tmp_path):
    url = f"sqlite:///{tmp_path / 's.db'}"
    study = optuna.create_study(study_name="old", storage=open_storage(url, patient=True))
    study.enqueue_trial({"x": 3})
    trial = ask(study, DIST)
    gone = subprocess.Popen(["true"])
    gone.wait()
    trial.set_user_attr("worker", {"host": socket.gethostname(), "pid": gone.pid, "start": 1})
    assert reap_dead_trials(study) == [trial.number]
    assert Worker().as_dict()["pidns"] == os.readlink("/proc/self/ns/pid")
