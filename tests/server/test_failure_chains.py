"""Chained exceptions in a server log (tuner/server/failures.py, ``classify_log``): Python prints the
original exception first and the one raised while handling it (``During handling of the above
exception, another exception occurred:``) or from it (``The above exception was the direct cause of
the following exception:``) last, each under its own ``Traceback (most recent call last):``. The
exception that ended the server is the last one; the failure region starts at the last traceback,
so it holds that one exception's line, and argument errors are judged by it alone: an argument
error raised from another error is one, and an error raised while handling an argument error is
not. Text from Python's own ``traceback.format_exc``, through files named as SGLang 0.5.23's."""

from __future__ import annotations

import traceback

import pytest

from tuner.server.failures import classify_log, error_line, failure_region

# managers/scheduler.py, run_scheduler_process: logger.error(f"Scheduler hit an exception: {traceback}")
SCHEDULER = "[2026-12-01 10:10:00] ERROR Scheduler hit an exception: "
# entrypoints/engine.py, launch_phase_sigquit_handler
SIGQUIT = "[2026-12-01 10:10:00] ERROR Received sigquit from a child process. It usually means the child failed.\n"
ARGS = "/x/sglang/srt/arg_groups/speculative_hook.py"
MLA = "/x/sglang/srt/layers/attention/flashinfer_mla_backend.py"


def _raise_in(path: str, statement: str) -> None:
    exec(compile(statement, path, "exec"), {})


def _chained(inner: tuple[str, str], outer: tuple[str, str], cause: bool) -> str:
    """The scheduler's log of ``outer`` raised while handling ``inner`` (``from`` it with ``cause``)."""
    try:
        try:
            _raise_in(*inner)
        except Exception as exc:
            if cause:
                try:
                    _raise_in(*outer)
                except Exception as raised:
                    raise raised from exc
            _raise_in(*outer)
    except Exception:
        return SCHEDULER + traceback.format_exc() + SIGQUIT
    raise AssertionError("nothing raised")


@pytest.mark.parametrize("cause", [True, False], ids=["direct_cause", "during_handling"])
def test_the_last_exception_of_a_chain_decides(cause):
    joint = ("The above exception was the direct cause of the following exception:" if cause else
             "During handling of the above exception, another exception occurred:")
    # an argument error raised from (or while handling) a loading error: invalid_args
    log = _chained((MLA, "raise RuntimeError('draft backend init failed')"),
                   (ARGS, "raise ValueError('bad speculative flags')"), cause)
    assert joint in log and log.count("Traceback (most recent call last)") == 2
    assert "RuntimeError" not in failure_region(log)
    assert classify_log(log, 1, "startup") == "invalid_args"
    assert error_line(log) == "ValueError: bad speculative flags"
    # a backend refusal raised from (or while handling) an argument error: no argument error
    log = _chained((ARGS, "raise ValueError('bad speculative flags')"),
                   (MLA, "raise RuntimeError('Currently Flashinfer MLA only supports topk=1')"), cause)
    assert joint in log and "bad speculative flags" not in failure_region(log)
    assert classify_log(log, 1, "startup") == "other"
    assert error_line(log).startswith("RuntimeError: Currently Flashinfer MLA")
