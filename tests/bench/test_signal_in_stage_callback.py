"""A signal whose handler raises (the tuner's: ``SystemExit(143)`` for SIGTERM, ``KeyboardInterrupt``
for Ctrl-C, tuner/server/signals.py) while ``after_stage`` runs: the exception leaves ``run_suite``
as it is, and asyncio logs nothing of it.

QA (qa154): SIGTERM to a worker whose stage callback's storage call hung on a frozen PostgreSQL
printed ``Task exception was never retrieved ... SystemExit: 143`` with a traceback on a clean stop:
the exception ended the suite's task and blew out of the event loop, and the task, done, was never
awaited again (tuner/bench/runner.py ``_guarded``). A real signal to this process, a real simulator.
"""

from __future__ import annotations

import gc
import logging
import os
import signal

import pytest
from support.simproc import running_sim

from tuner.bench import run_suite
from tuner.bench.plan import stage_plan
from tuner.config.suite import load_suite
from tuner.server.signals import stop_on_signals

SUITE = {
    "name": "stopped",
    "prompts": [{"name": "fib", "text": "Write a Python function that returns the n-th Fibonacci number."}],
    "single": {"lengths": [16], "repeats": 2},
    "sweep": {"concurrencies": [1], "max_tokens": 16},
    "warmup": {"requests": 1, "max_tokens": 4},
    "timeout_s": 60,
}


@pytest.mark.parametrize("signum, raised", [(signal.SIGTERM, SystemExit), (signal.SIGINT, KeyboardInterrupt)])
def test_a_signal_during_a_stage_callback_leaves_the_suite_without_a_task_traceback(signum, raised, caplog):
    suite = load_suite(SUITE)
    plan = stage_plan(suite, first=[1])
    calls: list[str] = []

    def after_stage(index, name, result):
        calls.append(name)
        os.kill(os.getpid(), signum)  # the handler raises here, in the callback (a storage call's place)
        return False

    gc.collect()  # another test's leftovers (a fake server's pending tasks) say so now, not below
    caplog.clear()
    caplog.set_level(logging.ERROR, logger="asyncio")
    with running_sim("--sim-noise", "0", speedup=50) as sim:
        with pytest.raises(raised), stop_on_signals():
            run_suite(sim.url, suite, plan=plan, after_stage=after_stage)
        gc.collect()  # a task whose exception nobody retrieved says so when it is collected
    assert calls and len(calls) == 1, calls
    logged = [r.getMessage() for r in caplog.records if r.name == "asyncio"]
    assert not logged, logged
