"""Short worker processes forked from one parent that has imported tuner already (a zygote).

A test that starts many short tuner workers spends most of each one's CPU importing tuner, Optuna,
SQLAlchemy and alembic (about a CPU second a fresh interpreter). A zygote imports them once; each
worker is then a fork of it: a real process of its own (its own pid, killed by a real SIGKILL, its
exit status read by waitpid), which runs the given code as ``python -c CODE ARGV`` would.

Contract:

* :func:`start_zygote` starts ``python -c`` in a session of its own; the caller owns it and ends it
  with :meth:`Zygote.close` (SIGKILL to that session's process group, which holds the workers too).
* The zygote is single-threaded (it only imports, forks and waits), so forking it is safe. A worker
  gets its argv, environment and cwd from :meth:`Zygote.run`, writes its stdout and stderr to files,
  and leaves with ``os._exit`` (its daemon threads die with it, as at a normal exit; tuner registers
  no atexit handlers).
* What a module reads from the environment at import (``TUNER_HEARTBEAT_*_S``) is read in the
  zygote: give those to :func:`start_zygote`, and the same to every run.
* :meth:`Zygote.run` returns a :class:`subprocess.CompletedProcess` (a negative returncode: the
  signal that ended the worker); past ``timeout`` it closes the zygote and raises ``TimeoutError``.
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import subprocess
import sys
from pathlib import Path

SERVE = r"""
import importlib, json, os, sys, traceback
for name in sys.argv[1:]:
    importlib.import_module(name)
for line in sys.stdin:
    req = json.loads(line)
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.chdir(req["cwd"])
            os.environ.clear()
            os.environ.update(req["env"])
            for fd, path in ((1, req["out"]), (2, req["err"])):
                f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(f, fd)
                os.close(f)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            sys.argv = ["-c", *req["argv"]]
            exec(compile(req["code"], "<worker>", "exec"), {"__name__": "__main__"})
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            traceback.print_exc()
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}) + "\n")
    sys.stdout.flush()
"""


#: ``python -m tuner ARGV`` as the code of :meth:`Zygote.run` (the argv: the command's words).
TUNER_CLI = "import runpy; runpy.run_module('tuner', run_name='__main__')"
#: What a `tuner` command imports (python -X importtime of a study run and confirm), for a CLI zygote.
CLI_PRELOAD = ["tuner.cli", "tuner.engine.storage", "tuner.server.launcher", "alembic.context", "alembic.op",
               "sqlalchemy.orm", "sqlalchemy.dialects.sqlite", "tuner.config.study", "tuner.cli.output",
               "tuner.engine.confirm", "tuner.engine.backends", "tuner.engine.runner", "tuner.sim.profile",
               "tuner.results.confirmed", "tuner.server.command", "tuner.bench.client"]


def cli_zygote(tmp_path_factory):
    """A module fixture's body: a zygote for `tuner` commands, started with this suite's own
    environment (less ``TUNER_TEST_KILL_AT``), as a fresh ``python -m tuner`` would read it at import."""
    env = {k: v for k, v in os.environ.items() if k != "TUNER_TEST_KILL_AT"}
    z = start_zygote(CLI_PRELOAD, env, tmp_path_factory.mktemp("cli-zygote"))
    yield z
    z.close()


class Zygote:
    def __init__(self, proc: subprocess.Popen):
        self.proc = proc
        self._n = 0

    def run(self, code: str, argv: list, env: dict, cwd: Path, timeout: float) -> subprocess.CompletedProcess:
        self._n += 1
        out, err = Path(cwd) / f".worker{self._n}.out", Path(cwd) / f".worker{self._n}.err"
        req = {"code": code, "argv": [str(a) for a in argv], "env": dict(env), "cwd": str(cwd),
               "out": str(out), "err": str(err)}
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            ready = sel.select(timeout)
        if not ready:
            self.close()
            tail = err.read_text(errors="replace")[-2000:] if err.exists() else ""
            raise TimeoutError(f"a forked worker ran past {timeout} s: {tail}")
        line = self.proc.stdout.readline()
        if not line:
            raise AssertionError(f"the zygote died ({self.proc.poll()})")
        code_ = json.loads(line)["returncode"]
        return subprocess.CompletedProcess(argv, code_, out.read_text(errors="replace"),
                                           err.read_text(errors="replace"))

    def close(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=60)
        for f in (self.proc.stdin, self.proc.stdout):
            f.close()


def start_zygote(preload: list[str], env: dict, cwd: Path) -> Zygote:
    """A zygote that has imported ``preload`` (module names) with ``env``; see the module's contract."""
    proc = subprocess.Popen([sys.executable, "-c", SERVE, *preload], env=env, cwd=cwd, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    return Zygote(proc)


def start_zygote_under(prefix: list[str], preload: list[str], env: dict, cwd: Path) -> Zygote:
    """:func:`start_zygote`'s zygote, started through ``prefix``: a command that execs the rest in
    the same process (``unshare --user --map-root-user``), so the zygote, and every worker forked
    from it, runs where that command puts it (a user namespace); :meth:`Zygote.close` still ends it."""
    proc = subprocess.Popen([*prefix, sys.executable, "-c", SERVE, *preload], env=env, cwd=cwd, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
    return Zygote(proc)
