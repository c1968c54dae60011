"""`tuner study create S.yaml | head -1`: a command that writes, its stdout pipe closed by the reader,
exits 1 as the pipe may have cut its work short, and says so in one stderr line naming the command
(tuner/cli/__init__.py, ``_TunerGroup.pipe_closed``); with stderr in the same closed pipe (``2>&1 |
head``) it still exits 1 with no traceback. Real processes, a real pipe whose reading end is closed
before the command prints.

QA (qa172): `tuner study create S.yaml | head -1` and `tuner bench --url URL | head -1` exited 1
and printed nothing at all, so a script under `set -o pipefail` failed with no reason given.
"""

import subprocess
import sys

import pytest

from support.model_study import make_model_study
from support.prepared_once import prepared_once


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    # run once per session, whichever xdist worker asks first; each worker reads its own copy
    return prepared_once(tmp_path_factory, "wpipe", lambda folder: make_model_study(folder, "wpipe", n_trials=2)) \
        / "wpipe.yaml"


def _create(study, stderr):
    run = subprocess.Popen([sys.executable, "-m", "tuner", "study", "create", str(study)], cwd=study.parent,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr)
    run.stdout.close()  # the reader is gone before the first line
    _, err = run.communicate(timeout=300)
    return run.returncode, (err or b"").decode()


def test_a_writing_command_says_why_its_closed_pipe_failed_it(study):
    code, err = _create(study, subprocess.PIPE)
    assert err.splitlines() == [
        "error: cannot write standard output: its reader went away (a closed pipe) before tuner study create "
        "finished, so its work may be cut short; give it a file (> FILE) or a terminal and run it again"], err
    assert code == 1


def test_with_stderr_in_the_same_closed_pipe_it_exits_1_all_the_same(study):
    code, err = _create(study, subprocess.STDOUT)
    assert (code, err) == (1, "")
