"""An SQLite storage on a full disk from the start (tuner/engine/storage.py, QA qa96): `tuner study
create` said "database or disk is full" and left a 0-byte ``NAME.db``, which every later command
took for a storage; `tuner study run` waited out its patience and left one too. Now each says one
line naming the folder to free, and leaves no file; a file that was there before is never removed.

A real tmpfs, filled to its last byte: it needs root, as CI has (without it the tests fail saying
so, rather than skipping).
"""

import os
import subprocess
import sys
from contextlib import contextmanager

import pytest
from click.testing import CliRunner
from support.faults import disk_trouble, disk_trouble_over, fault_env
from support.model_study import model_study_yaml

from tuner.cli import cli

TUNER = [sys.executable, "-m", "tuner"]


@contextmanager
def full_disk(folder):
    """``folder``: a small tmpfs mounted for the block, filled to its last byte."""
    if os.geteuid() != 0:
        pytest.fail("this test mounts a tmpfs and fills it: run it as root (CI does)")
    folder.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    assert done.returncode == 0, f"mount tmpfs failed as root: {done.stderr.strip()}"
    try:
        disk_trouble(folder)
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def tuner(*argv, cwd, **env):
    return subprocess.run([*TUNER, *argv], capture_output=True, text=True, cwd=cwd, timeout=300,
                          env=fault_env(**env))


def in_process(*argv):
    """``tuner ARGV`` in this process, under the workers' environment (fault_env), where only its exit
    code and what it says are read: a subprocess would cost an import and show nothing more. (A
    command whose output is counted line by line runs as a subprocess: only there does every line
    written to the real stderr show.)"""
    env = {k: v for k, v in fault_env().items() if k.startswith("TUNER_")}
    return CliRunner().invoke(cli, list(argv), env={**env, "TUNER_TEST_KILL_AT": None})


def test_create_and_run_on_a_full_disk_leave_no_storage_file(tmp_path):
    with full_disk(tmp_path / "disk") as disk:
        db = disk / "full.db"
        study = tmp_path / "full.yaml"
        study.write_text(model_study_yaml("full", f"sqlite:///{db}", 2, noise=0.02, seed=1))
        created = tuner("study", "create", str(study), cwd=tmp_path)
        assert created.returncode == 2, created.stdout + created.stderr
        lines = created.stderr.strip().splitlines()
        assert len(lines) == 1 and "database or disk is full" in lines[0], lines
        assert f"free space on the disk of {disk} and run again" in lines[0], lines
        assert not db.exists(), "an empty storage file was left on the full disk"
        # a worker waits out its patience, then stops with one line: no file left either
        ran = tuner("study", "run", str(study), "--workdir", str(tmp_path / "wd"), cwd=tmp_path,
                    TUNER_STORAGE_PATIENCE_S="2")
        assert ran.returncode == 75 and "Traceback" not in ran.stderr, ran.stdout + ran.stderr
        assert not db.exists(), "an empty storage file was left on the full disk"
        disk_trouble_over(disk)
        created = in_process("study", "create", str(study))
        assert created.exit_code == 0, created.output
        shown = in_process("study", "status", str(study))
        assert shown.exit_code == 0 and "study full" in shown.stdout, shown.output


def test_an_empty_file_that_was_there_is_kept(tmp_path):
    with full_disk(tmp_path / "disk") as disk:
        db = disk / "full.db"
        disk_trouble_over(disk)
        db.touch()
        disk_trouble(disk)
        study = tmp_path / "full.yaml"
        study.write_text(model_study_yaml("full", f"sqlite:///{db}", 2, noise=0.02, seed=1))
        # create fails on the disk; status reads the empty file as a database without a study, and
        # no longer opens it (which would write Optuna's tables into it)
        for argv, said in ((["study", "create", str(study)], "database or disk is full"),
                           (["study", "status", str(study)], "no such storage: the database holds no study")):
            done = in_process(*argv)
            assert done.exit_code == 2 and said in done.stderr, done.output
            assert db.is_file(), f"{argv[1]} removed a file it did not make"
