"""`tuner study status NAME | head -1`: a command that only reads, its stdout pipe closed by the
reader, exits 0 and says nothing, as `git log | head` does; a command that writes keeps exit 1, as
the pipe may have cut its work short, and says so on stderr (tuner/cli/__init__.py, ``READ_ONLY``).
Real processes, a real pipe whose reading end is closed before the command prints.

QA: every read command (status, pareto, export, list, compare) exited 1 in a pipe into `head`,
through click's main and rich's console, which each exit 1 on a broken pipe.
"""

import subprocess
import sys

import pytest

from support.model_study import make_model_study
from support.prepared_once import prepared_once


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    return prepared_once(tmp_path_factory, "pipe", lambda folder: make_model_study(folder, "pipe", n_trials=3)) \
        / "pipe.yaml"


@pytest.mark.parametrize("argv, code", [
    (["study", "status"], 0),  # a rich table
    (["study", "pareto", "-f", "csv"], 0),  # click's echo
    (["study", "create"], 1),  # writes: a broken pipe is not taken as done
])
def test_a_closed_pipe_ends_a_read_command_with_exit_0(study, argv, code):
    run = subprocess.Popen([sys.executable, "-m", "tuner", *argv, str(study)], cwd=study.parent,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    run.stdout.close()  # the reader is gone before the first line
    _, err = run.communicate(timeout=300)
    # a command that writes says why it failed (tests/cli/test_write_pipe_closed_said.py)
    said = "" if code == 0 else f"before tuner {' '.join(argv)} finished"
    assert run.returncode == code and (said in err.decode() if said else err.decode() == ""), err
