"""A command whose terminal is gone: started in a terminal and detached (``tuner study status S &
disown``, ``setsid``), the terminal closed before it prints, so every write to it is EIO. One
line on stderr naming standard output, the error and the fix, exit 1, no traceback
(tuner/cli/__init__.py, ``_stdout_failed``); with stderr on the same dead terminal, exit 1 all the
same. Real processes on a real pseudo-terminal whose other end is closed.

QA (qa172): `tuner study status S.yaml`, `tuner space list eagle3` and `tuner --help` there ended in
OSError's traceback ([Errno 5] Input/output error).
"""

import os
import subprocess
import sys

import pytest


def _on_a_dead_terminal(argv, stderr_too=False):
    """Run ``argv`` with stdout (and stderr) on a pseudo-terminal already hung up; (exit code, stderr)."""
    master, slave = os.openpty()
    os.close(master)  # the terminal is gone: a write to its other end is EIO
    try:
        proc = subprocess.Popen([sys.executable, "-m", "tuner", *argv], stdin=subprocess.DEVNULL,
                                stdout=slave, stderr=slave if stderr_too else subprocess.PIPE,
                                start_new_session=True)
    finally:
        os.close(slave)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, (err or b"").decode()


@pytest.mark.parametrize("argv", [["space", "list", "eagle3"], ["--help"]], ids=" ".join)
def test_a_command_on_a_terminal_that_is_gone_says_one_line(argv):
    code, err = _on_a_dead_terminal(argv)
    assert err.splitlines() == [
        "error: cannot write standard output: Input/output error (its terminal is gone?); to detach a "
        "command, send its output to a file: > FILE 2>&1"], err
    assert code == 1


def test_with_stderr_on_the_same_dead_terminal_it_exits_1():
    assert _on_a_dead_terminal(["space", "list", "eagle3"], stderr_too=True) == (1, "")
