"""A command that only reads when given a flag -- `study confirm --show` (the last confirmation),
`study run --dry-run` (the run's plan), `launch --print` (a launch's command line) -- whose stdout
pipe its reader closes early (`| head -5`) ends quietly with exit 0, as a read command does
(tuner/cli/__init__.py, ``READ_ONLY_WITH``). Real processes, a real pipe whose reading end is
closed before the command prints.

QA (qa172): each exited 1, as a command whose work the pipe may have cut short, though none of them
measures or writes anything.
"""

import subprocess
import sys

import pytest
from support.faults import study_file
from support.model_study import make_model_study

from tuner.cli import _only_reads


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("ropipe")
    make_model_study(folder, "ro", n_trials=None)  # created, never run: a dry run plans its first trials
    study_file(folder, "simro", 1, storage="sqlite:///simro.db")  # launch --print starts nothing
    return folder


@pytest.mark.parametrize("argv", [["study", "run", "ro.yaml", "--dry-run"],
                                  ["launch", "simro.yaml", "--print"]], ids=" ".join)
def test_a_read_only_form_ends_quietly_on_a_closed_pipe(folder, argv):
    run = subprocess.Popen([sys.executable, "-m", "tuner", *argv], cwd=folder, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run.stdout.close()  # the reader is gone before the first line
    _, err = run.communicate(timeout=300)
    assert "error:" not in err.decode(), err
    assert run.returncode == 0


def test_which_command_lines_only_read():
    # `confirm --show` needs a confirmation measured first (tens of seconds): its line is judged here,
    # by the same rule the process above goes through
    assert _only_reads(["study", "confirm", "S.yaml", "--show"])
    assert _only_reads(["study", "run", "--dry-run", "S.yaml"])
    assert _only_reads(["launch", "S.yaml", "--print"])
    assert not _only_reads(["study", "confirm", "S.yaml"]) and not _only_reads(["study", "run", "S.yaml"])
    assert not _only_reads(["launch", "S.yaml"]) and not _only_reads(["study", "create", "S.yaml"])
