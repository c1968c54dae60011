"""A helper command that overstays its time (nvidia-smi on a wedged GPU, an import check) is killed
with everything it started, and the call returns (tuner/server/bounded_run.py).

QA: ``subprocess.run(timeout=...)`` killed only the child: a wrapper's own child lived on past the
timeout; and it then waited for the killed child with no bound (a child in uninterruptible sleep, as
nvidia-smi on a GPU fallen off the bus, held the tuner for ever; not reproducible without such a GPU).
The stand-in nvidia-smi is a real script that starts a real child; both are this test's own processes,
killed by the pids they wrote if the code under test left them."""

import os
import signal
import stat
import time

import psutil

from tuner.server import gpus


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def test_an_nvidia_smi_past_its_time_is_killed_with_its_child(tmp_path, monkeypatch):
    pids = tmp_path / "pids"
    smi = tmp_path / "nvidia-smi"
    # a wrapper that starts a child holding its output, then hangs itself
    smi.write_text(f"#!/bin/sh\nsleep 300 &\necho $$ $! > {pids}\nwait\n")
    smi.chmod(smi.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setattr(gpus, "NVIDIA_SMI_TIMEOUT_S", 1.0)
    try:
        assert gpus.gpu_memory_used_mib(str(smi)) is None  # unknown, as for any nvidia-smi that fails
        wrapper, child = (int(p) for p in pids.read_text().split())
        deadline = time.monotonic() + 30
        while (_alive(wrapper) or _alive(child)) and time.monotonic() < deadline:
            time.sleep(0.1)
        # before the fix: the wrapper's child lived on (only the wrapper was killed)
        assert not _alive(child), "nvidia-smi's own child outlived its timeout"
        assert not _alive(wrapper)
    finally:
        for pid in (int(p) for p in pids.read_text().split()) if pids.exists() else ():
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
