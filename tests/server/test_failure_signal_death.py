"""A server process that died of a signal is quoted by the line that says so (tuner/server/failures.py,
``error_line``): faulthandler's "Fatal Python error: Segmentation fault" (SGLang's scheduler enables
faulthandler, managers/scheduler.py), else SGLang's "Subprocess scheduler_N (pid=P) crashed with exit code
C" (utils/watchdog.py, SubprocessWatchdog), not the thread dump's last frame or the parent's closing
"Received sigquit from a child process". QA (qa151): a stand-in TP rank's segfault after ready was quoted
as "Received sigquit from a child process. It usually means the child failed."."""

from __future__ import annotations

import signal
import textwrap

from support.healthy_http import HEALTHY_THREAD_PY, script_server, struck_after_ready

from tuner.server.failures import classify_log, error_line

READY = "[2026-12-07 00:20:00] The server is fired up and ready to roll!\n"
DUMP = ("\nCurrent thread 0x00007f3a1bfff640 (most recent call first):\n"
        + "".join(f'  File "/x/sglang/srt/managers/scheduler.py", line {600 + i} in event_loop_overlap\n'
                  for i in range(20))
        + "\nExtension modules: numpy.core._multiarray_umath, torch._C, zmq.backend.cython._zmq (total: 112)\n")


def closing(code: int) -> str:
    return (f"[2026-12-07 00:30:01] Subprocess scheduler_2 (pid=9399) crashed with exit code {code}. Triggering "
            "SIGQUIT for cleanup...\n"
            "[2026-12-07 00:30:01] Received sigquit from a child process. It usually means the child failed.\n")


def test_a_ranks_segfault_is_quoted_by_faulthandlers_line():
    log = READY + "Fatal Python error: Segmentation fault\n" + DUMP + closing(-11)
    assert error_line(log) == "Fatal Python error: Segmentation fault"
    assert classify_log(log, -9, "running") == "crash_after_ready"


def test_a_rank_killed_without_a_word_is_quoted_by_sglangs_watchdog_line():
    # SIGKILLed (the kernel's OOM killer): no faulthandler, only the parent's watchdog says so
    log = READY + "[2026-12-07 00:30:00 TP0] Decode batch, #running-req: 2\n" + closing(-9)
    assert "Subprocess scheduler_2 (pid=9399) crashed with exit code -9" in error_line(log)


def test_a_fatal_error_before_the_last_traceback_is_not_quoted():
    later = ("[2026-12-07 00:31:00] ERROR Scheduler hit an exception: Traceback (most recent call last):\n"
             '  File "/x/sglang/srt/managers/scheduler.py", line 1, in f\n    g()\nValueError: boom\n')
    log = READY + "Fatal Python error: Segmentation fault\n" + DUMP + later
    assert error_line(log) == "ValueError: boom"


# Ready at once; on "go", it dies of SIGSEGV with faulthandler on, deep in a stack (a real dump).
SERVER = textwrap.dedent(r'''
    import faulthandler, os, resource, signal, sys, time

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core file wherever CI runs
    port = int(sys.argv[1])
''') + HEALTHY_THREAD_PY + textwrap.dedent(r'''
    while not os.path.exists(os.path.join(sys.argv[2], "go")):
        time.sleep(0.02)
    faulthandler.enable()

    def deep(n):
        if n == 0:
            os.kill(os.getpid(), signal.SIGSEGV)
        deep(n - 1)

    deep(20)
''')


def test_a_server_dead_of_a_segfault_is_quoted_by_faulthandlers_line(tmp_path):
    srv = script_server(tmp_path, SERVER, str(tmp_path))
    failure_class, message = struck_after_ready(srv, tmp_path / "go")
    assert srv.returncode == -signal.SIGSEGV
    assert failure_class == "crash_after_ready"
    assert message.startswith("server killed by SIGSEGV after it was ready: Fatal Python error: Segmentation fault")
