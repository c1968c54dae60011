"""The default layout, an SQLite storage beside the workdir on one disk, and that disk filling while
a trial measures (tuner/engine/journal.py, QA qa96): the journal entry and the storage were refused
at once, the worker gave up past its patience saying `nothing measured is waiting`, and the
measurement was lost (its trial failed by the next run, its setting queued again). Now the entry
goes to the journal's fallback folder (``TUNER_JOURNAL_FALLBACK``, else the temporary folder), the
worker's last line names it, and the next run stores it without measuring again.

A real tmpfs, filled to its last byte: it needs root, as CI has (without it the test fails saying
so, rather than skipping).
"""

import os
import subprocess
import sys

import optuna
import pytest
from optuna.trial import TrialState
from support.faults import (
    disk_trouble,
    disk_trouble_over,
    fault_env,
    launches_by_trial,
    study_file,
    trial_server_up,
    worker_through_fault,
)

TUNER = [sys.executable, "-m", "tuner"]


def test_a_full_disk_under_storage_and_workdir_keeps_the_measurement(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("this test mounts a tmpfs and fills it: run it as root (CI does)")
    disk = tmp_path / "disk"
    disk.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32m", "tmpfs", str(disk)], capture_output=True,
                          text=True)
    assert done.returncode == 0, f"mount tmpfs failed as root: {done.stderr.strip()}"
    fallback = tmp_path / "fallback"
    env = fault_env(TUNER_STORAGE_PATIENCE_S="5", TUNER_JOURNAL_FALLBACK=str(fallback))
    try:
        db = f"sqlite:///{disk / 'one.db'}"
        # 2 trials: the fault strikes the last one, and the next run replays it and launches nothing
        path = study_file(tmp_path, "one", 2, storage=db)
        workdir = disk / "one"
        argv = ["study", "run", str(path), "--workdir", str(workdir)]
        # once trial 1's server is up, the database and the workdir's journal refuse every write
        code, out, errors, number = worker_through_fault(
            argv, env, tmp_path, lambda: trial_server_up(workdir, 0), lambda proc: disk_trouble(disk))
        assert code == 75 and "Traceback" not in out, out[-3000:]
        assert len(errors) == 1 and "database or disk is full" in errors[0], out[-3000:]
        assert "(the disk is full: free space on it)" in errors[0], errors  # QA: no fix was named
        # QA: "nothing measured is waiting (journal .../journal is empty)", and the measurement lost
        assert f"1 measurement journaled in {fallback} (trial {number})" in errors[0], errors
        assert len(list(fallback.glob("*.json"))) == 1
        disk_trouble_over(disk)
        again = subprocess.run([*TUNER, *argv], env=env, cwd=tmp_path, capture_output=True, text=True,
                               timeout=300)
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        replayed = f"replayed from the journal into the storage: trial {number} (told)"
        assert replayed in again.stdout, again.stdout
        trial = optuna.load_study(study_name="one", storage=db).trials[number]
        assert trial.state == TrialState.COMPLETE, trial.state
        assert trial.user_attrs["status"] == "measured", trial.user_attrs
        # stored from the journal, not measured again: its one launch
        assert launches_by_trial(workdir)[str(number)] == 1
        assert not list(fallback.glob("*.json")) and not list((workdir / "journal").glob("*.json"))
    finally:
        subprocess.run(["umount", "-l", str(disk)], capture_output=True)


def test_the_fallback_takes_what_the_workdir_refuses_and_is_never_a_link(tmp_path, monkeypatch):
    from tuner.engine.journal import Journal

    workdir = tmp_path / "wd"
    workdir.mkdir()
    (workdir / "journal").write_text("a file where the journal's folder goes: every write there fails")
    entry = {"finish": {"study": "s", "number": 3}}
    target = tmp_path / "elsewhere"
    target.mkdir()
    monkeypatch.setenv("TUNER_JOURNAL_FALLBACK", str(tmp_path / "link"))
    (tmp_path / "link").symlink_to(target)
    journal = Journal(workdir)
    with pytest.raises(OSError):  # the workdir's own error: a link is nobody's to trust
        journal.write(entry, "s-3")
    assert list(target.iterdir()) == []
    monkeypatch.setenv("TUNER_JOURNAL_FALLBACK", str(tmp_path / "fallback"))
    journal = Journal(workdir)
    path = journal.write(entry, "s-3")
    assert path.parent == tmp_path / "fallback" and journal.refused is not None
    assert (tmp_path / "fallback").stat().st_mode & 0o777 == 0o700
    assert [p for p, _ in Journal(workdir).entries("s")] == [path]
    journal.remove(path)
    assert Journal(workdir).entries("s") == []
