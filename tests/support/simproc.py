"""Start the simulated SGLang server as a real process for a test, and always stop it.

    from support.simproc import running_sim

    with running_sim("--speculative-algorithm", "EAGLE3", ..., speedup=50) as sim:
        requests.post(sim.url + "/generate", json=...)

The server binds 127.0.0.1 on a port the OS picks (``--port 0``; the port is read back from the
server's log), so parallel tests never collide. With ``ready=True`` the helper polls
``/health_generate`` until it answers 200, and raises :class:`SimProcessError` carrying the server's
log if the process exits or the deadline passes first. On leaving the block the process group gets
SIGTERM, then SIGKILL after a grace period. Nothing is left running, whatever happens in the block;
``sim.log`` stays readable afterwards.
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

_LISTENING = re.compile(r"listening on http://([\d.]+):(\d+)")
#: Simulator defaults a test does not care about: an obvious model name and no load delay.
DEFAULT_MODEL = "sim/test-model"


class SimProcessError(RuntimeError):
    """The simulator did not become ready (exited, or missed the deadline); ``str()`` has its log."""


class SimProcess:
    """A running simulator: ``url``, ``port``, ``proc`` (``subprocess.Popen``), ``log`` (text so far)."""

    def __init__(self, proc: subprocess.Popen, log_path: Path):
        self.proc, self.log_path = proc, log_path
        self.port: int | None = None
        self.url: str | None = None
        self._final_log: str | None = None

    @property
    def log(self) -> str:
        """Everything the server wrote to stdout and stderr so far (kept after the block ends)."""
        if self._final_log is not None:
            return self._final_log
        return self.log_path.read_text(errors="replace")

    def wait_for_port(self, deadline: float) -> int | None:
        """The bound port, once logged; ``None`` if the process exited first. Raises on deadline."""
        while time.monotonic() < deadline:
            m = _LISTENING.search(self.log)
            if m:
                self.port = int(m.group(2))
                self.url = f"http://127.0.0.1:{self.port}"
                return self.port
            if self.proc.poll() is not None:
                return None
            time.sleep(0.02)
        raise SimProcessError(f"simulator did not bind a port in time; log:\n{self.log}")

    def wait_ready(self, deadline: float) -> None:
        """Poll ``/health_generate`` until 200; raise with the log if it exits or time runs out."""
        if self.wait_for_port(deadline) is None:
            raise SimProcessError(f"simulator exited with {self.proc.returncode} before binding; "
                                  f"log:\n{self.log}")
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SimProcessError(f"simulator exited with {self.proc.returncode}; log:\n{self.log}")
            try:
                with urllib.request.urlopen(self.url + "/health_generate", timeout=2) as resp:
                    if resp.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.02)
        raise SimProcessError(f"simulator not ready before the deadline; log:\n{self.log}")

    def wait(self, timeout_s: float) -> int:
        """The exit code, waiting at most ``timeout_s`` (raises ``subprocess.TimeoutExpired``)."""
        return self.proc.wait(timeout=timeout_s)

    def stop(self, grace_s: float = 5.0) -> int | None:
        """SIGTERM to the process group, SIGKILL after ``grace_s``. Safe to call twice."""
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=grace_s)
            except ProcessLookupError:
                pass
        return self.proc.returncode


def sim_argv(*args: str, speedup: float = 50.0) -> list[str]:
    """The command line :func:`running_sim` runs: defaults filled in unless ``args`` sets them."""
    argv = [sys.executable, "-m", "tuner.sim", *args]
    given = set(args)
    if "--model-path" not in given and "--model" not in given:
        argv += ["--model-path", DEFAULT_MODEL]
    if "--port" not in given:
        argv += ["--host", "127.0.0.1", "--port", "0"]
    if "--sim-speedup" not in given:
        argv += ["--sim-speedup", str(speedup)]
    if "--sim-load-seconds" not in given:
        argv += ["--sim-load-seconds", "0"]
    return argv


@contextmanager
def running_sim(*args: str, speedup: float = 50.0, ready: bool = True, timeout_s: float = 20.0):
    """Run ``python -m tuner.sim ARGS`` for the ``with`` block; yields a :class:`SimProcess`.

    ``ready=True``: returns once ``/health_generate`` answers 200 (raises :class:`SimProcessError`
    with the log otherwise). ``ready=False``: returns at once (after the port is bound, if the
    process gets that far); use ``sim.wait(...)`` / ``sim.log`` to check a failure. ``timeout_s``
    bounds the start-up wait.
    """
    with tempfile.TemporaryDirectory(prefix="simproc-") as tmp:
        log_path = Path(tmp) / "server.log"
        with open(log_path, "wb") as log_file:
            proc = subprocess.Popen(sim_argv(*args, speedup=speedup), stdout=log_file,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        with serving(proc, log_path, ready=ready, timeout_s=timeout_s) as sim:
            yield sim


@contextmanager
def serving(proc, log_path: Path, *, ready: bool, timeout_s: float, if_stop_fails=None):
    """The started simulator ``proc`` (Popen, or Popen-like: support/forked_sim.py), logging to
    ``log_path``, as a :class:`SimProcess` for the ``with`` block: waited for as
    :func:`running_sim` says, stopped when the block ends. ``if_stop_fails(proc)`` runs when the
    stop raises, before the error goes on (a forked one whose zygote is gone: its group killed)."""
    sim = SimProcess(proc, log_path)
    try:
        deadline = time.monotonic() + timeout_s
        if ready:
            sim.wait_ready(deadline)
        else:
            sim.wait_for_port(deadline)
        yield sim
    finally:
        try:
            sim.stop()
        except BaseException:
            if if_stop_fails is not None:
                if_stop_fails(proc)
            raise
        finally:
            sim._final_log = sim.log
