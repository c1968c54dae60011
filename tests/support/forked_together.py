"""Several tuner processes, each forked from one parent that imported tuner once.

The concurrency tests start N real worker processes together (creating one storage, sharing one
budget), and some tests run a few short commands as real processes: N fresh interpreters each
import tuner, Optuna, SQLAlchemy and alembic and, for a study run, the sampler's scipy and
scikit-learn (a CPU second or three each on a loaded machine). Here one parent imports them once
and forks the N workers; each is a real process of its own (its own pid, database connections
made after the fork, its own standard streams), which runs the given code as ``python -c CODE
ARGV`` would (a ``SystemExit``'s code; a traceback and 1 for an exception). It ends either as that
would, through the interpreter's own exit (standard streams flushed at exit, so a flush that fails
there says so as it would), or, where a test reads only what the worker printed and stored, with
``os._exit`` once its streams are flushed, as :mod:`support.zygote`'s workers do: a forked worker's
interpreter exit tears down every module the parent imported, about 0.4 CPU s with Optuna's.

Contract:

* :func:`run_forked` starts ``python -c`` in a session of its own with ``env``; it imports
  ``preload`` (module names: what a module reads from the environment at import is read there,
  once) and forks one worker per :class:`Job`: all at once (``together``), or each once the one
  before it has exited; each ends through the interpreter's exit (``interpreter_exit``) or with
  ``os._exit`` (its daemon threads die with it, as at a normal exit; tuner registers no atexit
  handlers). A worker runs in its job's ``cwd``, with its stdout to the job's ``stdout`` path (a
  file it writes, ``/dev/full``...) or a file of its own, its stderr to a file of its own, and
  /dev/null for stdin.
* It returns one :class:`subprocess.CompletedProcess` per job, in order (a negative returncode: the
  signal that ended the worker; ``stdout`` empty when the job named its own). Past ``timeout_s``
  the parent's session (the workers too) is killed and ``TimeoutError`` raised, with the workers'
  stderr tails.
* The parent only imports, forks and waits (no thread of its own is started), so forking it is safe.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

PARENT = r"""
import importlib, json, os, sys
req = json.loads(sys.stdin.readline())
for name in req["preload"]:
    importlib.import_module(name)
job, pids, codes = None, [], []
for j in req["jobs"]:
    pid = os.fork()
    if pid == 0:
        job = j
        break
    if req["together"]:
        pids.append(pid)
    else:
        codes.append(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
if job is None:
    codes += [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
    sys.stdout.write(json.dumps(codes) + "\n")
else:
    # The worker: from here on it is `python -c CODE ARGV`, its exit too (falling off the end) when
    # the job asks for the interpreter's exit; else os._exit once its streams are flushed.
    os.chdir(job["cwd"])
    for fd, path in ((1, job["out"]), (2, job["err"])):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(f, fd)
        os.close(f)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.argv = ["-c", *job["argv"]]
    if req["interpreter_exit"]:
        exec(compile(req["code"], "<worker>", "exec"), {"__name__": "__main__"})
    else:
        import traceback
        code = 1
        try:
            exec(compile(req["code"], "<worker>", "exec"), {"__name__": "__main__"})
            code = 0
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except BaseException:
            traceback.print_exc()
        finally:
            try:
                sys.stdout.flush()
                sys.stderr.flush()
            finally:
                os._exit(code)
"""


@dataclass
class Job:
    """One worker: its argv (``sys.argv[1:]``), working folder, and stdout (None: a file of its own,
    read back into the result)."""
    argv: list
    cwd: Path
    stdout: Path | None = None


def run_forked(preload: list[str], code: str, jobs: list[Job], env: dict, timeout_s: float,
               together: bool, interpreter_exit: bool) -> list[subprocess.CompletedProcess]:
    """Run ``code`` once per job, each a process forked from one parent that imported ``preload``;
    see the module's contract."""
    with tempfile.TemporaryDirectory(prefix="tuner-forked-") as tmp:
        outs = [str(j.stdout) if j.stdout is not None else f"{tmp}/{i}.out" for i, j in enumerate(jobs)]
        errs = [f"{tmp}/{i}.err" for i in range(len(jobs))]
        req = {"preload": list(preload), "code": code, "together": together,
               "interpreter_exit": interpreter_exit,
               "jobs": [{"argv": [str(a) for a in j.argv], "cwd": str(j.cwd), "out": out, "err": err}
                        for j, out, err in zip(jobs, outs, errs)]}
        parent = subprocess.Popen([sys.executable, "-c", PARENT], env=env, cwd=tmp, text=True,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  start_new_session=True)
        try:
            stdout, stderr = parent.communicate(json.dumps(req) + "\n", timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(parent.pid, signal.SIGKILL)
            parent.communicate()
            tails = [Path(e).read_text(errors="replace")[-1000:] for e in errs if Path(e).exists()]
            raise TimeoutError(f"workers ran past {timeout_s} s: {tails}") from None
        finally:
            if parent.poll() is None:
                os.killpg(parent.pid, signal.SIGKILL)
                parent.wait(timeout=60)
        assert parent.returncode == 0 and stdout.strip(), \
            f"the parent failed ({parent.returncode}): {stderr[-2000:]}"
        codes = json.loads(stdout.strip().splitlines()[-1])
        read = [Path(o).read_text(errors="replace") if j.stdout is None else "" for j, o in zip(jobs, outs)]
        return [subprocess.CompletedProcess(j.argv, c, out, Path(e).read_text(errors="replace"))
                for j, c, out, e in zip(jobs, codes, read, errs)]


def run_together(preload: list[str], code: str, argvs: list[list[str]], env: dict, cwd: Path,
                 timeout_s: float) -> list[subprocess.CompletedProcess]:
    """Run ``code`` once per argv in ``argvs``, all at once, in ``cwd``, each ending with ``os._exit``:
    :func:`run_forked`."""
    return run_forked(preload, code, [Job(argv, cwd) for argv in argvs], env, timeout_s, together=True,
                      interpreter_exit=False)
