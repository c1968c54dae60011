"""An artifact (a trial's server log, its suite JSON) stored onto a full disk (tuner/engine/artifacts.py,
QA qa96): Optuna's file store wrote the file in place, and a full disk left a truncated (or 0-byte)
file in ``artifacts/`` that no trial names. Now the error is raised with nothing left there.

A real tmpfs smaller than the file: it needs root, as CI has (without it the test fails saying so,
rather than skipping).
"""

import os
import subprocess

import optuna
import pytest

from tuner.engine.artifacts import artifact_dir, store_trial_artifacts


def test_a_full_disk_leaves_no_artifact_file(tmp_path):
    if os.geteuid() != 0:
        pytest.fail("this test mounts a tmpfs as the workdir: run it as root (CI does)")
    workdir = tmp_path / "wd"
    workdir.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(workdir)],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"mount tmpfs failed as root: {done.stderr.strip()}"
    try:
        log = tmp_path / "server.log"  # beside the small disk: twice its size
        log.write_bytes(b"INFO a server log line\n" * (2 * 1024 * 1024 // 23))
        study = optuna.create_study(directions=["maximize"])
        trial = study.ask()
        with pytest.raises(OSError) as raised:
            store_trial_artifacts(study, trial, [log], workdir)
        assert "No space left on device" in str(raised.value)
        assert os.listdir(artifact_dir(workdir)) == [], "a partial artifact file was left"
        assert not [k for k in study._storage.get_trial(trial._trial_id).system_attrs if "artifact" in k]
        # with room, the same file is stored whole
        log.write_bytes(b"INFO a shorter log\n")
        (artifact_id,) = store_trial_artifacts(study, trial, [log], workdir)
        assert os.listdir(artifact_dir(workdir)) == [artifact_id]
        assert (artifact_dir(workdir) / artifact_id).read_bytes() == log.read_bytes()
    finally:
        subprocess.run(["umount", "-l", str(workdir)], capture_output=True)
