"""CPython's "Fatal Python error: _enter_buffered_busy: could not acquire lock for <_io.BufferedWriter
name='<stderr>'> at interpreter shutdown, possibly due to daemon threads" (Modules/_io/bufferedio.c) is
printed by a process that was exiting anyway -- SGLang's parent, after its watchdog named the rank that
died and sent SIGQUIT -- so the error line (tuner/server/failures.py, ``error_line``) quotes the watchdog's
line, not it. QA (qa152): a rank SIGKILLed after ready (the kernel's OOM killer) was quoted by the
parent's shutdown artifact, the rank's death hidden. A faulthandler line of a process that died of a
signal is still quoted (tests/server/test_failure_signal_death.py)."""

from __future__ import annotations

from tuner.server.failures import classify_log, error_line

READY = "[2026-12-07 03:00:00] The server is fired up and ready to roll!\n"
WATCHDOG = ("[2026-12-07 03:00:05] Subprocess scheduler_1 (pid=9399) crashed with exit code -9. "
            "Triggering SIGQUIT for cleanup...")
SIGQUIT = "[2026-12-07 03:00:05] Received sigquit from a child process. It usually means the child failed.\n"
SHUTDOWN = ("Fatal Python error: _enter_buffered_busy: could not acquire lock for <_io.BufferedWriter "
            "name='<stderr>'> at interpreter shutdown, possibly due to daemon threads\n"
            "Python runtime state: finalizing (tstate=0x00000000014c29c0)\n\n"
            "Current thread 0x00007fd701a06740 (most recent call first):\n  <no Python frame>\n")


def test_the_parents_shutdown_artifact_does_not_hide_the_rank_that_died():
    decode = "[2026-12-07 03:00:01 TP0] Decode batch, #running-req: 4\n"
    log = READY + decode + WATCHDOG + "\n" + SIGQUIT + SHUTDOWN
    assert error_line(log) == WATCHDOG
    assert classify_log(log, -9, "running") == "crash_after_ready"


def test_a_ranks_own_fatal_error_is_still_quoted_before_the_artifact():
    log = (READY + "Fatal Python error: Segmentation fault\n\nCurrent thread 0x01 (most recent call first):\n"
           '  File "/x/sglang/srt/managers/scheduler.py", line 1 in f\n'
           + WATCHDOG.replace("-9", "-11") + "\n" + SIGQUIT + SHUTDOWN)
    assert error_line(log) == "Fatal Python error: Segmentation fault"
