"""`tuner --help > /dev/full` (and `--version`): the root's own options print while its command line
is parsed, before any command runs; a disk that cannot take that text is one line, exit 1, as a
command's output is (tuner/cli/__init__.py, ``_TunerGroup.write_failed``). Real processes, stdout a
real /dev/full.

QA (qa172): both ended in OSError's 30-line traceback ([Errno 28] No space left on device), where
`tuner study status --help > /dev/full` was already one line.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")


@pytest.mark.parametrize("flag", ["--help", "--version", "-h"])
def test_the_roots_own_output_on_a_full_disk_is_one_line(tmp_path, flag):
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "tuner", flag], cwd=tmp_path, stdin=subprocess.DEVNULL,
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    assert done.stderr.splitlines() == ["error: cannot write standard output: No space left on device"], \
        done.stderr
    assert done.returncode == 1
