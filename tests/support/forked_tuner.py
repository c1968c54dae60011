"""A `tuner` command forked from a zygote (support/zygote.py) and left running, for the tests that act
on it while it runs (SIGSTOP, SIGCONT, SIGTERM, a fault struck at the right moment): the calls of
:class:`subprocess.Popen` those tests make, without the second of imports a fresh ``python -m tuner``
costs.

Contract:

* :func:`start_forked` returns once the worker runs (its pid known); :meth:`Zygote.run` waits for it
  in a thread of this process, so a zygote serves one forked worker at a time.
* The worker is a real process of its own (its own pid; SIGSTOP, SIGCONT, SIGTERM, SIGKILL sent to it
  are real), a child of the zygote, in the zygote's process group (the zygote's owner kills that group
  when it closes) unless started with ``new_session``. Both its output streams go to ``log``, as
  ``stdout=f, stderr=STDOUT`` would.
* What tuner reads from the environment at import (``TUNER_HEARTBEAT_*_S``, ``TUNER_STALL_S``) is the
  zygote's, read once: start the zygote with the environment the forked workers get
  (:func:`zygote.start_zygote`); ``PYTHONUNBUFFERED=1`` there too, so the log is written as it is said.
* :meth:`ForkedTuner.wait` and :meth:`ForkedTuner.communicate` raise
  :class:`subprocess.TimeoutExpired` as Popen's do; :func:`support.processes.finish` ends one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from .zygote import SERVE, TUNER_CLI, Zygote

# The worker's first lines: both streams into the log (one open file, one offset, as Popen's
# stderr=STDOUT), then its pid made known, written whole (renamed into place) before it is read.
PRELUDE = """
import os as _os
if {new_session!r}:
    _os.setsid()
_fd = _os.open({log!r}, _os.O_WRONLY | _os.O_CREAT | _os.O_TRUNC, 0o644)
_os.dup2(_fd, 1)
_os.dup2(_fd, 2)
_os.close(_fd)
with open({pid_file!r} + ".part", "w") as _f:
    _f.write(str(_os.getpid()))
_os.replace({pid_file!r} + ".part", {pid_file!r})
"""


class ForkedTuner:
    """A forked `tuner` command running in the background; see the module's contract."""

    def __init__(self, zygote: Zygote, argv: list, env: dict, cwd: Path, log: Path, timeout: float,
                 new_session: bool = False, main: str = TUNER_CLI, what: str = "tuner"):
        """``main``: the code the worker runs after :data:`PRELUDE` (``python -m tuner`` by default;
        support/forked_sim.py gives ``python -m tuner.sim``'s), ``what`` names it in a failure."""
        self.args, self.log = [str(a) for a in argv], Path(log)
        self.returncode: int | None = None
        self.stdout = self.stderr = None  # the output is in the log (support.processes.finish closes none)
        self._error: BaseException | None = None
        self._pid_file = Path(cwd) / f".forked-{id(self)}-{time.monotonic_ns()}.pid"
        code = PRELUDE.format(log=str(self.log), pid_file=str(self._pid_file), new_session=new_session)
        code += main
        self._thread = threading.Thread(target=self._run, args=(zygote, code, env, cwd, timeout), daemon=True,
                                        name=f"forked-{what}")
        self._thread.start()
        deadline = time.monotonic() + 60
        while not self._pid_file.exists():
            if not self._thread.is_alive():
                said = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
                raise AssertionError(f"the forked {what} ended before it ran ({self._error!r}): {said}")
            if time.monotonic() > deadline:
                raise AssertionError("the zygote forked no worker within 60 s")
            time.sleep(0.005)
        self.pid = int(self._pid_file.read_text())
        self._pid_file.unlink()

    def _run(self, zygote: Zygote, code: str, env: dict, cwd: Path, timeout: float) -> None:
        try:
            self.returncode = zygote.run(code, self.args, env=env, cwd=cwd, timeout=timeout).returncode
        except BaseException as exc:  # the zygote died or closed: the test's wait says so
            self._error = exc

    def poll(self) -> int | None:
        if self._thread.is_alive():
            return None
        if self._error is not None:
            raise AssertionError(f"the zygote lost its forked tuner: {self._error!r}")
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self._thread.join(timeout)
        if self._thread.is_alive():
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.poll()

    def communicate(self, timeout: float | None = None) -> tuple[str, None]:
        """Wait for the end; the log's text (both streams), as Popen's with ``stdout=PIPE, stderr=STDOUT``."""
        self.wait(timeout)
        return self.log.read_text(errors="replace"), None

    def send_signal(self, sig: int) -> None:
        # Its pid is not another's before the zygote reaps it, a moment before the thread ends.
        if self._thread.is_alive():
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:  # reaped just now: it has ended, as Popen's signal to an ended one
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


def start_forked(zygote: Zygote, argv: list, env: dict, cwd: Path, log: Path, timeout: float = 900,
                 new_session: bool = False) -> ForkedTuner:
    """``tuner ARGV`` forked from ``zygote`` with ``env`` in ``cwd``, its output in ``log``, left
    running; past ``timeout`` s the zygote is closed (support/zygote.py), the worker with it (unless
    ``new_session``: the worker leads a session and process group of its own, as Popen's
    ``start_new_session=True``; the test ends that group, ``os.killpg(proc.pid, ...)``)."""
    return ForkedTuner(zygote, argv, env, cwd, log, timeout, new_session)


def start_zygote_under(prefix: list[str], preload: list[str], env: dict, cwd: Path) -> Zygote:
    """:func:`support.zygote.start_zygote` run through ``prefix``, an argv that execs the rest in the
    same process (``unshare --uts sh -c 'hostname node-b && exec "$@"' sh``: every worker forked from
    it on another hostname, as a worker of another node)."""
    proc = subprocess.Popen([*prefix, sys.executable, "-c", SERVE, *preload], env=env, cwd=cwd, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    return Zygote(proc)

