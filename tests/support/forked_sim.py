"""``python -m tuner.sim ARGS`` as a process forked from a zygote (support/zygote.py) that imported the
simulator once: the tests of the simulator's command line and failure modes start a few dozen of
them, and a fresh interpreter spends about 0.2 CPU s importing asyncio, aiohttp and the simulator
before it parses a flag.

Each is still a real process of its own (its own pid, exit status, standard streams; real HTTP on
127.0.0.1; real signals), which runs ``tuner/sim/__main__.py`` as ``python -m tuner.sim`` does
(``runpy``, ``sys.argv`` the command's words): an exception it lets out is a traceback on its stderr
and exit 1, as the interpreter's own.

Contract:

* :func:`sim_zygote` is a module fixture's body: a :class:`SimZygote`, whose zygote imported
  :data:`SIM_PRELOAD` with this suite's environment and ``PYTHONUNBUFFERED=1`` (a server's log is
  written as it is said); it serves one forked simulator at a time (support/zygote.py). A zygote
  closed by a timeout (its worker killed with it) is replaced at the next call: one test's hung
  simulator fails that test only.
* :func:`run_forked_sim` runs one to its end: a :class:`subprocess.CompletedProcess` as
  ``subprocess.run(sim_argv(...), capture_output=True, text=True)`` returns; past ``timeout_s`` the
  zygote is closed (the simulator killed with it) and ``TimeoutError`` raised.
* :func:`running_forked_sim` is :func:`support.simproc.running_sim` for a forked simulator: the same
  :class:`support.simproc.SimProcess` (``url``, ``log``, ``wait``, ``stop``; ``proc`` has Popen's
  ``poll``, ``wait``, ``send_signal``, ``pid``), the worker leading a session of its own, so leaving
  the block ends its process group (SIGTERM, then SIGKILL) as there.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .forked_tuner import ForkedTuner
from .simproc import serving, sim_argv
from .zygote import Zygote, start_zygote

#: What ``python -m tuner.sim`` imports before and while it serves (python -X importtime).
SIM_PRELOAD = ["tuner.sim.server", "tuner.sim.api", "tuner.sim.model", "tuner.sim.args", "tuner.sim.profile",
               "tuner.sim.openai_format", "tuner.sim.server_info", "tuner.sim.metrics", "tuner.sglang.rules",
               "tuner.sglang.attention", "tuner.sglang.parallel", "tuner.sglang.hardware", "tuner.sglang.model",
               "tuner.config.space", "tuner.config.yamlfile", "tuner.config.files", "aiohttp.web", "yaml"]
#: ``python -m tuner.sim`` as the code of :meth:`Zygote.run` (its argv: the command's words).
SIM_MAIN = "import runpy; runpy.run_module('tuner.sim', run_name='__main__', alter_sys=True)"


def _env() -> dict:
    return {**os.environ, "PYTHONUNBUFFERED": "1"}


class SimZygote:
    """The zygote a test module's simulators are forked from, started again once a timeout closed it."""

    def __init__(self, tmp_path_factory):
        self._factory = tmp_path_factory
        self.folder = tmp_path_factory.mktemp("sim-runs")  # the short runs' cwd and output files
        self._zygote: Zygote | None = None

    def live(self) -> Zygote:
        if self._zygote is None or self._zygote.proc.poll() is not None:
            if self._zygote is not None:
                self._zygote.close()
            self._zygote = start_zygote(SIM_PRELOAD, _env(), self._factory.mktemp("sim-zygote"))
        return self._zygote

    def close(self) -> None:
        if self._zygote is not None:
            self._zygote.close()


def sim_zygote(tmp_path_factory):
    """A module fixture's body: the :class:`SimZygote` of a test module's forked simulators."""
    z = SimZygote(tmp_path_factory)
    yield z
    z.close()


def run_forked_sim(zygote: SimZygote, *args: str, speedup: float, timeout_s: float) -> subprocess.CompletedProcess:
    """``sim_argv(*args, speedup=speedup)`` run to its end, forked from ``zygote``; see the contract."""
    argv = sim_argv(*args, speedup=speedup)[3:]  # the words after ``python -m tuner.sim``
    return zygote.live().run(SIM_MAIN, argv, env=_env(), cwd=zygote.folder, timeout=timeout_s)


@contextmanager
def running_forked_sim(zygote: SimZygote, *args: str, speedup: float = 50.0, ready: bool = True,
                       timeout_s: float = 20.0):
    """:func:`support.simproc.running_sim`, the simulator forked from ``zygote``; see the contract."""
    with tempfile.TemporaryDirectory(prefix="simproc-") as tmp:
        log_path = Path(tmp) / "server.log"
        proc = ForkedTuner(zygote.live(), sim_argv(*args, speedup=speedup)[3:], _env(), Path(tmp), log_path,
                           timeout=timeout_s + 120, new_session=True, main=SIM_MAIN, what="simulator")
        with serving(proc, log_path, ready=ready, timeout_s=timeout_s, if_stop_fails=_kill_group) as sim:
            yield sim


def _kill_group(proc) -> None:
    # its zygote lost (closed by a timeout): the server leads a session of its own, which the
    # zygote's end does not reach; end it here, so nothing is left running
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
