"""Run the stand-in server (:mod:`support.standin_server`) for a test, and always stop it.

* :func:`standin_python`: a wrapper to put in a study's ``server.python``: the tuner launches it with
  the simulator's command line (``-m tuner.sim ...``), and it runs the stand-in with those flags.
  Which launches misbehave is ``server.env: {STANDIN_MODES: ...}``.
* :func:`running_standin`: the stand-in as a process of the test's own, on a free port (``--port 0``,
  read back from its output), for the benchmark client's tests. On leaving the block its process
  group gets SIGKILL (a frozen process cannot act on SIGTERM anyway) and is reaped.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

SERVER = Path(__file__).with_name("standin_server.py")
_LISTENING = re.compile(r"listening on http://([\d.]+):(\d+)")


def standin_python(folder: Path) -> Path:
    """An executable that runs the stand-in with whatever the launcher passes (``-m tuner.sim ...``)."""
    wrapper = Path(folder) / "python-standin"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{SERVER}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


class StandInProcess:
    def __init__(self, proc: subprocess.Popen, log_path: Path):
        self.proc, self.log_path = proc, log_path
        self.url: str | None = None

    @property
    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def freeze(self) -> None:
        os.killpg(self.proc.pid, signal.SIGSTOP)

    def frozen(self) -> bool:
        with open(f"/proc/{self.proc.pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "T"

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)


@contextmanager
def running_standin(mode: str = "honest", *args: str, speedup: float = 20.0, timeout_s: float = 30.0):
    """The stand-in in ``mode`` (for every launch key), with the speculative ``args`` given (none: an
    autoregressive server); yields a :class:`StandInProcess` once ``/health`` answers."""
    with tempfile.TemporaryDirectory(prefix="standin-") as tmp:
        log_path = Path(tmp) / "server.log"
        argv = [sys.executable, str(SERVER), "--host", "127.0.0.1", "--port", "0",
                "--sim-speedup", str(speedup), *args]
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True, env={**os.environ, "STANDIN_MODES": f"*={mode}"})
        srv = StandInProcess(proc, log_path)
        try:
            deadline = time.monotonic() + timeout_s
            while srv.url is None:
                m = _LISTENING.search(srv.log)
                if m:
                    srv.url = f"http://127.0.0.1:{m.group(2)}"
                elif proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"stand-in did not start; log:\n{srv.log}")
                else:
                    time.sleep(0.05)
            while True:
                try:
                    with urllib.request.urlopen(srv.url + "/health", timeout=5):
                        break
                except (urllib.error.URLError, OSError):
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.05)
            yield srv
        finally:
            srv.kill()
