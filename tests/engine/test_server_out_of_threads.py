"""A server that cannot start a thread is the node's limit, not the setting's fault (QA, qa222).

Under a limit on threads (``prlimit --nproc`` as a plain user, a cgroup's ``pids.max``, or a
thread's stack that does not fit under ``ulimit -v``), the simulator's scheduler loop died of
``RuntimeError: can't start new thread`` at the first request, silently, and the server listened on
without answering: the baseline (or a trial) failed as ``hung``, its log saying nothing. Now the
simulator dies as SGLang does when its scheduler raises ("Scheduler hit an exception: ...", the
parent's SIGQUIT line, exit), and the tuner reads its log: the run stops with one line naming the
limit, the trial queued again, no setting failed.

Real processes: the simulator (and the study's server) under a real limit, set by a wrapper given as
``server.python`` (what ``prlimit`` on the server does): a thread's stack of 3 GiB that cannot fit
under an address space of 1.5 GiB, which root cannot escape as it escapes ``RLIMIT_NPROC``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest
from support.demo_study import demo_study
from support.simproc import sim_argv
from support.zygote import TUNER_CLI, cli_zygote

GIB = 2**30
#: a thread's stack (glibc takes RLIMIT_STACK for it) that cannot fit under the address space
STARVED = f"import resource; resource.setrlimit(resource.RLIMIT_STACK, ({3 * GIB}, {3 * GIB})); " \
          f"resource.setrlimit(resource.RLIMIT_AS, ({3 * GIB // 2}, {3 * GIB // 2}))"

SUITE = {"name": "tiny", "prompts": [{"name": "p", "text": "Write a haiku about autumn leaves."}],
         "single": {"lengths": [16], "repeats": 1}, "sweep": {"concurrencies": [32], "max_tokens": 16},
         "warmup": {"requests": 1, "max_tokens": 4}, "timeout_s": 300, "ignore_eos": True}


JSON = {"Content-Type": "application/json"}


def _starve() -> None:
    exec(STARVED)


def test_the_simulator_whose_scheduler_cannot_start_a_thread_dies_as_sglang_does(tmp_path):
    log_path = tmp_path / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(sim_argv("--port", "0", "--host", "127.0.0.1"),
                                stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, preexec_fn=_starve)
    try:
        deadline = time.monotonic() + 60
        url = None
        while url is None and time.monotonic() < deadline and proc.poll() is None:
            for line in log_path.read_text().splitlines():
                if "HTTP server listening on " in line:
                    url = line.rsplit(" ", 1)[1]
            time.sleep(0.1)
        assert url is not None, log_path.read_text()
        body = json.dumps({"text": "hi", "sampling_params": {"max_new_tokens": 4}}).encode()
        try:  # the first request arms the scheduler's timer thread
            urllib.request.urlopen(urllib.request.Request(url + "/generate", data=body, headers=JSON), timeout=30).read()
        except (urllib.error.URLError, ConnectionError, OSError):
            pass  # the process died under it
        assert proc.wait(timeout=30) == 1, log_path.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    text = log_path.read_text()
    assert "ERROR Scheduler hit an exception: Traceback (most recent call last):" in text, text
    assert "RuntimeError: can't start new thread" in text, text
    assert text.rstrip().endswith("ERROR Received sigquit from a child process. It usually means the child "
                                  "failed."), text


zygote = pytest.fixture(scope="module")(cli_zygote)


def _tuner(zygote, *argv: str, cwd) -> subprocess.CompletedProcess:
    """``python -m tuner ARGV``, a real process forked from the module's zygote (imports done once)."""
    import os

    return zygote.run(TUNER_CLI, list(argv), env=dict(os.environ), cwd=cwd, timeout=300)


def _trials(zygote, path, cwd) -> list[dict]:
    done = _tuner(zygote, "study", "status", str(path), "-f", "json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["trials"]


def _one_error(run: subprocess.CompletedProcess, log: str, tail: str = "") -> None:
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Traceback" not in run.stderr, run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: the server could not start a thread (RuntimeError: can't start new thread; log: "
                      f"{log}): the kernel refused it where the server runs: the limit on this user's processes "
                      "and threads (ulimit -u, a cgroup's pids.max) or a thread's stack (ulimit -s) that does not "
                      "fit under ulimit -v; no setting's fault: raise the limit or end some of this user's "
                      "processes and run again" + tail], run.stderr


def test_a_server_that_cannot_start_a_thread_blames_no_setting(tmp_path, zygote):
    starve = tmp_path / "starve"  # while this file exists, the server runs under the limit
    wrapper = tmp_path / "python-starved"
    wrapper.write_text(f'#!/bin/sh\nif [ -e "{starve}" ]; then\n  exec "{sys.executable}" -c '
                       f'"{STARVED}; import os, sys; os.execv(sys.executable, [sys.executable, *sys.argv[1:]])" "$@"\n'
                       f'fi\nexec "{sys.executable}" "$@"\n')
    wrapper.chmod(0o755)
    path = demo_study(tmp_path, "thr", **{"bench.suite": SUITE, "budget.n_trials": 2, "server.sim.speedup": 100,
                                          "server.python": str(wrapper), "server.startup_timeout_s": 60})
    work = tmp_path / "work"

    starve.touch()  # the baseline: it stops the run, and is measured by the next
    _one_error(_tuner(zygote, "study", "run", str(path), cwd=tmp_path), f"{work}/baseline/server.log")
    starve.unlink()
    first = _tuner(zygote, "study", "run", str(path), "--n-trials", "1", cwd=tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr

    starve.touch()  # a trial: queued again, as the disk's or the tuner's own limit leaves it
    _one_error(_tuner(zygote, "study", "run", str(path), cwd=tmp_path), f"{work}/trials/1/server.log")
    trials = _trials(zygote, path, tmp_path)
    cut = [t for t in trials if t["number"] == 1]
    assert cut and cut[0]["status"] == "interrupted", trials
    assert cut[0]["note"].startswith("the server could not start a thread"), cut
    assert not [t for t in trials if t["status"] == "failed"], trials
    queued = [t for t in trials if t["state"] == "WAITING" and t["requested"] == cut[0]["requested"]]
    assert queued, trials

    starve.unlink()  # the limit raised: the budget's launch is made, nothing failed
    again = _tuner(zygote, "study", "run", str(path), cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    trials = _trials(zygote, path, tmp_path)
    assert [t["status"] for t in trials].count("measured") == 2, trials
    assert not [t for t in trials if t["status"] == "failed"], trials

    starve.touch()  # `tuner study confirm` stops the same way: one line, no round failed
    confirm = _tuner(zygote, "study", "confirm", str(path), "--picks", "0", "--repeats", "2", cwd=tmp_path)
    starve.unlink()
    [log] = [line.split("log: ")[1].split(")")[0] for line in confirm.stderr.splitlines() if "log: " in line][:1]
    _one_error(confirm, log, "; the rounds measured so far are stored")
