"""`tuner study run` on an SQLite file another process holds locked past TUNER_STORAGE_PATIENCE_S
gives up by the patience: exit 75 and one line naming the patience and the lock. QA: patience 5 s
with the 60 s busy timeout waited 58 s (each try blocked for the whole busy timeout). Here the busy
timeout (900 s) is past the hang guard, so only the patience can end the run."""

from __future__ import annotations

import os
import sqlite3

import pytest
import yaml
from support.cli_in_process import tuner_here
from support.model_study import model_study_data
from support.zygote import CLI_PRELOAD, start_zygote

from tuner.cli import cli  # noqa: F401 - the package under test is importable

#: The run's environment: the patience (2 s) and a busy timeout (900 s) past the hang guard.
#: TUNER_SQLITE_TIMEOUT_S is read when tuner.engine.storage is imported: the zygote's too.
PATIENT = {**{k: v for k, v in os.environ.items() if k not in ("TUNER_STORAGE", "TUNER_TEST_KILL_AT")},
           "TUNER_STORAGE_PATIENCE_S": "2", "TUNER_SQLITE_TIMEOUT_S": "900"}


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    """Each run is a real process of its own, forked from one that imported the tuner in PATIENT's
    environment once (tests/support/zygote.py): about a CPU second saved per run."""
    z = start_zygote(CLI_PRELOAD, PATIENT, tmp_path_factory.mktemp("patience-zygote"))
    yield z
    z.close()


def run_on_a_locked_file(zygote, tmp_path, *target):
    """``tuner study run TARGET`` while another connection holds s.db locked past the patience (2 s);
    the busy timeout (900 s) is past the hang guard, so only the patience can end the run."""
    study = tmp_path / "s.yaml"
    study.write_text(yaml.safe_dump(model_study_data("s")))
    # the create is not what this tests: in this process (a Python start-up saved); the run stays real
    made = tuner_here("study", "create", str(study), cwd=tmp_path, env={"TUNER_STORAGE": None})
    assert made.exit_code == 0, made.output
    lock = sqlite3.connect(tmp_path / "s.db", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        r = zygote.run("from tuner.cli import main; main()",
                       ["study", "run", *[str(t).format(tmp=tmp_path) for t in target]], PATIENT, tmp_path,
                       timeout=240)
    finally:
        lock.execute("COMMIT")
        lock.close()
    assert r.returncode == 75, r.stdout[-2000:] + r.stderr[-2000:]
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in r.stderr, r.stderr
    assert "(TUNER_STORAGE_PATIENCE_S=2)" in errors[0] and "database is locked" in errors[0], errors[0]
    return errors[0]


def test_run_on_a_locked_file_ends_with_the_patience(tmp_path, zygote):
    error = run_on_a_locked_file(zygote, tmp_path, "--study", "s", "--storage", "sqlite:///{tmp}/s.db")
    waited = int(error.split("did not answer for ")[1].split(" ")[0])
    assert waited < 900, error  # the patience ended it, not the busy timeout running out


def test_run_of_a_study_file_on_a_locked_file_waits_as_run_study_does(tmp_path, zygote):
    # `run STUDY.yaml` runs tuner doctor's cheap checks first: its write probe failed the run on the
    # lock (exit 1, "check the URL, the server and the user's rights"), and reading whether an older
    # tuner made the study waited out the busy timeout five times, saying nothing. The lock is an
    # outage the run waits for, as `run --study` does: the patience ends it, exit 75, one line.
    run_on_a_locked_file(zygote, tmp_path, "{tmp}/s.yaml")
