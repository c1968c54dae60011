"""A disk that fills while a reader writes (ENOSPC: stdout redirected to a full disk, or `-o` on
one): one line saying what could not be written and why, exit 1, no traceback, and no output file
(tuner/cli/__init__.py, the root group's OSError lines)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest
from click.testing import CliRunner
from support.forked_together import Job, run_forked
from support.model_study import model_study_yaml
from support.prepared_once import prepared_once
from support.zygote import CLI_PRELOAD, TUNER_CLI

from tuner.cli import cli

STUDY = model_study_yaml("full", "sqlite:///full.db", 2, noise=0.02, seed=1)


def _run_study(folder):
    (folder / "full.yaml").write_text(STUDY)
    assert CliRunner().invoke(cli, ["study", "run", str(folder / "full.yaml")]).exit_code == 0


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """The study, run once per session (whichever xdist worker asks first); each worker reads its own copy."""
    return prepared_once(tmp_path_factory, "full", _run_study)


#: The readers whose stdout is a full disk, one test case each.
FULL_STDOUT = [["status", "full.yaml", "-f", "json"], ["pareto", "full.yaml", "-f", "csv"],
               ["export", "full.yaml", "--pick", "knee"], ["list", "--storage", "sqlite:///full.db"]]


@pytest.fixture(scope="module")
def on_a_full_disk(folder):
    """`tuner study ARGV > /dev/full` for each of :data:`FULL_STDOUT`, by its words: a real process
    each, one after another in the study's folder, ending through the interpreter's own exit (where
    a failed flush of stdout says "Exception ignored"), each forked from one parent that imported
    the CLI (support/forked_together.py): one import of the CLI and Optuna's storage, not four."""
    jobs = [Job(["study", *argv], folder, stdout=Path("/dev/full")) for argv in FULL_STDOUT]
    done = run_forked(CLI_PRELOAD, TUNER_CLI, jobs, dict(os.environ), timeout_s=600, together=False,
                      interpreter_exit=True)
    return {" ".join(argv): r for argv, r in zip(FULL_STDOUT, done)}


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("argv", FULL_STDOUT, ids=" ".join)
def test_stdout_on_a_full_disk_is_one_line(on_a_full_disk, argv):
    """QA: `tuner study pareto NAME -f json > /dev/full` ended in OSError's traceback
    ([Errno 28] No space left on device)."""
    done = on_a_full_disk[" ".join(argv)]
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "Exception ignored" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert lines == ["error: cannot write standard output: No space left on device"], done.stderr


def test_an_output_file_on_a_full_disk_is_one_line_and_not_written(folder, tmp_path, monkeypatch):
    import tuner.config.files as files

    def full(fd):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(files.os, "fsync", full)
    out = tmp_path / "best.yaml"
    r = CliRunner().invoke(cli, ["study", "export", str(folder / "full.yaml"), "--pick", "knee", "-o", str(out)])
    assert r.exit_code == 1, r.output
    assert r.exception is None or isinstance(r.exception, SystemExit), r.exception
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0] == f"error: cannot write {out}: No space left on device", r.output
    assert list(tmp_path.iterdir()) == []
