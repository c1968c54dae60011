"""`tuner study run` on an SQLite file another process holds locked past TUNER_STORAGE_PATIENCE_S
gives up by the patience: exit 75 and one line naming the patience and the lock. QA: patience 5 s
with the 60 s busy timeout waited 58 s (each try blocked for the whole busy timeout). Here the busy
timeout (900 s) is past the hang guard, so only the patience can end the run."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys

import yaml
from support.cli_in_process import tuner_here
from support.model_study import model_study_data

from tuner.cli import cli  # noqa: F401 - the package under test is importable


def run_on_a_locked_file(tmp_path, *target):
    """``tuner study run TARGET`` while another connection holds s.db locked past the patience (2 s);
    the busy timeout (900 s) is past the hang guard, so only the patience can end the run."""
    study = tmp_path / "s.yaml"
    study.write_text(yaml.safe_dump(model_study_data("s")))
    env = {k: v for k, v in os.environ.items() if k != "TUNER_STORAGE"}
    tuner = [sys.executable, "-c", "from tuner.cli import main; main()"]
    # the create is not what this tests: in this process (a Python start-up saved); the run stays real
    made = tuner_here("study", "create", str(study), cwd=tmp_path, env={"TUNER_STORAGE": None})
    assert made.exit_code == 0, made.output
    lock = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        patient = {**env, "TUNER_STORAGE_PATIENCE_S": "2", "TUNER_SQLITE_TIMEOUT_S": "900"}
        r = subprocess.run([*tuner, "study", "run", *[str(t).format(tmp=tmp_path) for t in target]],
                           cwd=tmp_path, env=patient, capture_output=True, text=True, timeout=240)
    finally:
        lock.execute("COMMIT")
        lock.close()
    assert r.returncode == 75, r.stdout[-2000:] + r.stderr[-2000:]
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "(TUNER_STORAGE_PATIENCE_S=2)" in errors[0] and "database is locked" in errors[0], errors[0]
    return errors[0]


def test_run_on_a_locked_file_ends_with_the_patience(tmp_path):
    error = run_on_a_locked_file(tmp_path, "--study", "s", "--storage", "sqlite:///{tmp}/s.db")
    waited = int(error.split("did not answer for ")[1].split(" ")[0])
    assert waited < 900, error  # the patience ended it, not the busy timeout running out


def test_run_of_a_study_file_on_a_locked_file_waits_as_run_study_does(tmp_path):
    # `run STUDY.yaml` runs tuner doctor's cheap checks first: its write probe failed the run on the
    # lock (exit 1, "check the URL, the server and the user's rights"), and reading whether an older
    # tuner made the study waited out the busy timeout five times, saying nothing. The lock is an
    # outage the run waits for, as `run --study` does: the patience ends it, exit 75, one line.
    run_on_a_locked_file(tmp_path, "{tmp}/s.yaml")
