"""A server stopped with SIGSTOP (frozen mid-request) takes the stop's SIGTERM at once: a stopped
process holds SIGTERM pending until it runs again, so a stop of a frozen server (Ctrl-C, the orphan
cleanup) waited out the whole ``stop_grace_s`` and SIGKILLed it, its own shutdown never run. Real
processes in a process group of their own, real signals."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from tuner.server.procs import terminate_group

#: a "server" and a child of it in its group (SGLang's scheduler), both ended by SIGTERM's default action
SERVER = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
print(child.pid, flush=True)
time.sleep(600)
"""


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rpartition(")")[2].split()[0]


def test_a_stopped_server_and_its_child_take_sigterm_not_sigkill():
    proc = subprocess.Popen([sys.executable, "-c", SERVER], start_new_session=True, stdout=subprocess.PIPE,
                            text=True)
    try:
        child = int(proc.stdout.readline())
        os.killpg(proc.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 10  # a guard only: stopping takes microseconds
        while {_state(proc.pid), _state(child)} != {"T"} and time.monotonic() < deadline:
            time.sleep(0.01)
        assert {_state(proc.pid), _state(child)} == {"T"}
        # a grace far past what a SIGTERM'd process needs: before, it ran out and SIGKILL came
        assert terminate_group(proc.pid, 20.0, leader=proc) is True
        assert proc.returncode == -signal.SIGTERM, proc.returncode
        assert not os.path.exists(f"/proc/{child}") or _state(child) == "Z"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # the group this test started
            proc.wait()
        proc.stdout.close()
