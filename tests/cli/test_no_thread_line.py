"""A run whose threads the kernel refuses (``ulimit -u`` reached by the user's processes and threads, a
cgroup's pids.max, no room for a thread's stack) stops with one line naming the limits, exit 1, not a
``RuntimeError: can't start new thread`` traceback (QA, qa217: ``prlimit --nproc=6:6 tuner study run``
as a plain user ended in one from the server log's cap thread; at 5, from the stall watch's).

Root ignores RLIMIT_NPROC, so the real refusal here is the other one the kernel makes: glibc gives each
new thread a stack of ``ulimit -s``, and a 4 GB one does not fit under a 3 GB ``ulimit -v``, while the
process's own (lazily grown) stack and heap do. A real ``tuner study run`` under real limits.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

from support.demo_study import demo_study

GIB = 1 << 30


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_STACK, (4 * GIB, resource.getrlimit(resource.RLIMIT_STACK)[1]))
    resource.setrlimit(resource.RLIMIT_AS, (3 * GIB, resource.getrlimit(resource.RLIMIT_AS)[1]))


def test_a_refused_thread_is_one_line_naming_the_limits(tmp_path):
    path = demo_study(tmp_path, "threads", **{"budget.n_trials": 1})
    # OpenBLAS starts its own threads as numpy loads and reports their refusal itself: one is enough
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "tuner", "study", "run", str(path)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, preexec_fn=_limited)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert errors[0].startswith("error: tuner study run could not start a thread (the kernel refused it; "), errors
    assert "ulimit -s 4194304 KiB within ulimit -v 3145728 KiB" in errors[0], errors
    status = subprocess.run([sys.executable, "-m", "tuner", "study", "status", str(path), "-f", "json"],
                            cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert status.returncode == 0, status.stderr
    trials = json.loads(status.stdout)["trials"]
    assert not [t for t in trials if t["status"] in ("measured", "failed")], trials  # nothing measured, no one blamed
