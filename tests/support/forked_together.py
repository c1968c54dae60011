"""Several tuner processes started at once, each forked from one parent that imported tuner once.

The concurrency tests start N real worker processes together (creating one storage, sharing one
budget): N fresh interpreters each import tuner, Optuna, SQLAlchemy and, for a study run, the
sampler's scipy and scikit-learn (a CPU second or three each on a loaded machine). Here one parent
imports them once and forks the N workers; each is a real process of its own (its own pid and
database connections, made after the fork), running at the same time as the others, which runs
the given code as ``python -c CODE ARGV`` would. :mod:`support.zygote` does the same for workers
run one after another.

Contract:

* :func:`run_together` starts ``python -c`` in a session of its own with ``env`` and ``cwd``; it
  imports ``preload`` (module names: what it imports at start-up is read there, once), forks one
  worker per argv at once and waits for all of them. Each worker gets its argv, writes its stdout
  and stderr to files of its own, reads /dev/null, and leaves with ``os._exit`` (its daemon threads
  die with it, as at a normal exit; tuner registers no atexit handlers).
* It returns one :class:`subprocess.CompletedProcess` per argv, in order (a negative returncode:
  the signal that ended the worker). Past ``timeout_s`` the parent's session (the workers too) is
  killed and ``TimeoutError`` raised, with the workers' stderr tails.
* The parent only imports and forks (no thread of its own is started), so forking it is safe.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

PARENT = r"""
import importlib, json, os, sys, traceback
req = json.loads(sys.stdin.readline())
for name in req["preload"]:
    importlib.import_module(name)
pids = []
for argv, out, err in zip(req["argvs"], req["outs"], req["errs"]):
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            for fd, path in ((1, out), (2, err)):
                f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(f, fd)
                os.close(f)
            null = os.open(os.devnull, os.O_RDONLY)
            os.dup2(null, 0)
            os.close(null)
            sys.argv = ["-c", *argv]
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
    pids.append(pid)
codes = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in pids]
sys.stdout.write(json.dumps(codes) + "\n")
"""


def run_together(preload: list[str], code: str, argvs: list[list[str]], env: dict, cwd: Path,
                 timeout_s: float) -> list[subprocess.CompletedProcess]:
    """Run ``code`` once per argv in ``argvs``, all at once, each a process forked from one parent
    that imported ``preload``; see the module's contract."""
    cwd = Path(cwd)
    outs = [str(cwd / f".together{i}.out") for i in range(len(argvs))]
    errs = [str(cwd / f".together{i}.err") for i in range(len(argvs))]
    req = {"preload": list(preload), "code": code, "argvs": [[str(a) for a in argv] for argv in argvs],
           "outs": outs, "errs": errs}
    parent = subprocess.Popen([sys.executable, "-c", PARENT], env=env, cwd=cwd, text=True,
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
    return [subprocess.CompletedProcess(argv, code, Path(out).read_text(errors="replace"),
                                        Path(err).read_text(errors="replace"))
            for argv, code, out, err in zip(argvs, codes, outs, errs)]
