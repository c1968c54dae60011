"""A workdir that goes away under a running `tuner study run` on the simulator (QA, qa96): its
filesystem remounted read-only between two trials (an NFS share that turns read-only), and its
``trials/`` folder deleted while a trial runs (someone freeing space).

Read-only: the measurement in flight is stored, the worker stops with one line and exit 1 (never a
traceback), and once the folder is writable again the next run finishes the study, every setting
measured once. Deleted: the trial keeps its figures and its suite JSON (the folder is made again).
The read-only test mounts a small tmpfs over the workdir, so it needs root, as CI has: without it
the test fails saying so, rather than skipping.
"""

import os
import shutil
import subprocess
import time

import optuna
import pytest
from optuna.trial import TrialState
from support.faults import (fault_env, fault_zygote, launches_by_trial, study_file, trial_server_up, wait_for,
                            worker_through_fault)
from support.forked_tuner import start_forked
from support.processes import finish
from support.zygote import TUNER_CLI


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    z = fault_zygote(tmp_path_factory)  # this file's workers forked from it (support/faults.py)
    yield z
    z.close()


def start_worker(zygote, path, workdir, cwd, log):
    return start_forked(zygote, ["study", "run", str(path), "--workdir", str(workdir)], fault_env(), cwd, log)


def mount(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["mount", *args], capture_output=True, text=True)


def remount_read_only(folder, proc, timeout_s: float = 120):
    """Remount ``folder``'s tmpfs read-only at the first moment the kernel allows it (no file open
    for writing there: a server's log is, while it runs), polling; fails when ``proc`` exits first."""
    deadline = time.monotonic() + timeout_s
    while mount("-o", "remount,ro", str(folder)).returncode != 0:
        assert proc.poll() is None, f"the worker exited ({proc.returncode}) before the remount"
        assert time.monotonic() < deadline, f"{folder} could not be remounted read-only in {timeout_s} s"
        time.sleep(0.005)


def test_workdir_read_only_between_trials_stops_with_one_line(tmp_path, zygote):
    if os.geteuid() != 0:
        pytest.fail("this test mounts a tmpfs over the workdir and remounts it read-only: run it as root "
                    "(CI does)")
    db = f"sqlite:///{tmp_path / 'ro.db'}"
    path = study_file(tmp_path, "ro", 4, storage=db)
    workdir = tmp_path / "wd"
    workdir.mkdir()
    done = mount("-t", "tmpfs", "-o", "size=32m", "tmpfs", str(workdir))
    assert done.returncode == 0, f"mount tmpfs failed as root: {done.stderr.strip()}"
    try:
        code, out, errors, _ = worker_through_fault(
            ["study", "run", str(path), "--workdir", str(workdir)], fault_env(), tmp_path,
            lambda: trial_server_up(workdir, 0), lambda proc: remount_read_only(workdir, proc), zygote)
        # QA: the server record could not be removed once its server stopped: OSError, a traceback
        assert code == 1 and "Traceback" not in out, out[-3000:]
        assert len(errors) == 1 and f"error: workdir {workdir}: cannot write " in errors[0], out[-3000:]
        assert "(Read-only file system)" in errors[0], errors
        study = optuna.load_study(study_name="ro", storage=db)
        measured = [t for t in study.trials if t.user_attrs.get("status") == "measured"]
        assert measured and all(t.state == TrialState.COMPLETE and t.values for t in measured)
        assert mount("-o", "remount,rw", str(workdir)).returncode == 0
        again = zygote.run(TUNER_CLI, ["study", "run", str(path), "--workdir", str(workdir)], env=fault_env(),
                           cwd=tmp_path, timeout=300)
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        trials = optuna.load_study(study_name="ro", storage=db).trials
        done = [t for t in trials if t.state == TrialState.COMPLETE]
        assert len(done) == 4 and all(t.user_attrs["status"] == "measured" for t in done), \
            [(t.number, t.state.name, t.user_attrs.get("status")) for t in trials]
        # every setting measured once, each by one launch; nothing left in the journal or as a record
        assert len({t.user_attrs["effective_key"] for t in done}) == 4
        launches = launches_by_trial(workdir)
        assert sorted(int(k) for k in launches if k != "baseline") == sorted(t.number for t in done), launches
        assert set(launches.values()) == {1}, launches
        assert not list((workdir / "journal").glob("*.json"))
        assert not list((workdir / "servers").glob("*.json")), "a stopped server's record was left"
    finally:
        subprocess.run(["umount", "-l", str(workdir)], capture_output=True)


def test_trials_folder_deleted_mid_trial_keeps_its_suite_json(tmp_path, zygote):
    db = f"sqlite:///{tmp_path / 'gone.db'}"
    path = study_file(tmp_path, "gone", 2, storage=db)
    workdir = tmp_path / "wd"
    log = tmp_path / "run.log"
    proc = start_worker(zygote, path, workdir, tmp_path, log)
    try:
        number = wait_for(lambda: trial_server_up(workdir), 180, "a trial's server", [proc])
        shutil.rmtree(workdir / "trials")
        code = proc.wait(timeout=300)
    finally:
        finish(proc)
    out = log.read_text()
    assert code == 0 and "Traceback" not in out, out[-3000:]
    # QA: "warning: trial N: suite JSON not written (.../trials/N/suite.json: No such file or directory)"
    assert "suite JSON not written" not in out, out[-3000:]
    trial = optuna.load_study(study_name="gone", storage=db).trials[number]
    assert trial.state == TrialState.COMPLETE and trial.user_attrs["status"] == "measured"
    assert "file_warnings" not in trial.user_attrs, trial.user_attrs["file_warnings"]
    suite_json = workdir / "trials" / str(number) / "suite.json"
    assert suite_json.is_file() and trial.user_attrs["suite_json"] is not None
