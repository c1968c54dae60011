"""A command that runs out of memory under its own limit (``ulimit -v``, a job's cap) says so in one
line, exit 1, not in a ``MemoryError`` traceback (QA, qa217: ``prlimit --as=200000000 tuner study run
demo.yaml`` ended in one, raised reading the study file).

A real subprocess under a real ``RLIMIT_AS``: set once the interpreter and numpy are loaded (OpenBLAS
takes its buffers as numpy loads and aborts in C when it cannot: no Python error to turn into a line),
a few MiB above what the process holds, so the command's own imports and storage run out of it.
"""

from __future__ import annotations

import subprocess
import sys

from click.testing import CliRunner

from tuner.cli import cli

LIMITED = """
import resource, sys
import numpy  # noqa: F401
from tuner.cli import main

vm = next(int(line.split()[1]) * 1024 for line in open("/proc/self/status") if line.startswith("VmSize:"))
resource.setrlimit(resource.RLIMIT_AS, (vm + 12 * 1024 * 1024, resource.RLIM_INFINITY))
sys.argv = ["tuner", *sys.argv[1:]]
main()
"""


def test_out_of_memory_is_one_line_naming_the_limit(tmp_path):
    assert CliRunner().invoke(cli, ["study", "init", str(tmp_path / "demo.yaml"), "--backend", "model"]).exit_code == 0
    done = subprocess.run([sys.executable, "-c", LIMITED, "study", "status", "demo.yaml", "-f", "json"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: tuner study status ran out of memory ("), lines
    assert "ulimit -v, is" in lines[0] and "KiB); raise the limit" in lines[0], lines
    assert done.stdout == ""


# A command that raises SystemError, as CPython does when an allocation fails inside its import
# machinery ("error return without exception set"): where the memory runs out under the limit above
# varies from run to run (CI: the study status test ended in that traceback once), so the error is
# raised here on purpose, under a real limit and without one.
RAISES_SYSTEM_ERROR = """
import resource, sys
import click, psutil
from tuner.cli import cli, main

@cli.command("boom")
def boom():
    raise SystemError("error return without exception set")

if sys.argv[1] == "limited":
    vm = psutil.Process().memory_info().vms
    resource.setrlimit(resource.RLIMIT_AS, (vm + 12 * 1024 * 1024, resource.RLIM_INFINITY))
sys.argv = ["tuner", "boom"]
main()
"""


def test_a_system_error_at_the_limit_is_the_out_of_memory_line(tmp_path):
    done = subprocess.run([sys.executable, "-c", RAISES_SYSTEM_ERROR, "limited"], cwd=tmp_path, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: tuner boom ran out of memory ("), lines
    assert "ulimit -v, is" in lines[0], lines


def test_a_system_error_with_memory_to_spare_is_not_called_out_of_memory(tmp_path):
    done = subprocess.run([sys.executable, "-c", RAISES_SYSTEM_ERROR, "unlimited"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    assert "out of memory" not in done.stderr and "SystemError: error return without exception set" in done.stderr
