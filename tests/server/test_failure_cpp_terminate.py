"""A C++ exception that ended a TP rank is where the server failed (tuner/server/failures.py,
``failure_region``). PyTorch's NCCL watchdog ends a rank of a running server on a collective timeout with
std::terminate: "terminate called after throwing an instance of 'c10::DistBackendError'" and its
"what(): ... Watchdog caught collective operation timeout: ..." line, no Python traceback; faulthandler
(enabled in SGLang's scheduler, managers/scheduler.py) then dumps the rank's threads, and the parent's
SubprocessWatchdog (utils/watchdog.py) and sigquit handler add their lines. QA (qa151): on a stand-in
``sglang.launch_server`` doing this during the suite, the trial failed ``crash_after_ready``, quoting
"Received sigquit from a child process"."""

from __future__ import annotations

import textwrap

from support.healthy_http import HEALTHY_THREAD_PY, script_server, struck_after_ready

from tuner.server.failures import classify_log, error_line

T = "[rank2]:[E1207 00:30:00.123456789 ProcessGroupNCCL.cpp:"
WORK = ("WorkNCCL(SeqNum=4021, OpType=ALLREDUCE, NumelIn=7168, NumelOut=7168, Timeout(ms)=600000) ran for "
        "600012 milliseconds before timing out.")
FRAMES = "".join(f"frame #{i}: <unknown function> + 0x5ba8afe (0x7f9a91bddafe in /x/torch/lib/libtorch_cuda.so)\n"
                 for i in range(6))
TERMINATE = (
    f"{T}632] [Rank 2] Watchdog caught collective operation timeout: {WORK}\n"
    f"{T}690] [Rank 2] To avoid data inconsistency, we are taking the entire process down.\n"
    "Exception raised from checkTimeout at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:635 "
    "(most recent call first):\n" + FRAMES + "\n"
    "terminate called after throwing an instance of 'c10::DistBackendError'\n"
    f"  what():  [PG ID 2 PG GUID 3 Rank 2] Process group watchdog thread terminated with exception: [Rank 2] "
    f"Watchdog caught collective operation timeout: {WORK}\n"
    "Exception raised from ncclCommWatchdog at /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1958 "
    "(most recent call first):\n" + FRAMES + "\n")
DUMP = ("Fatal Python error: Aborted\n\n"
        "Thread 0x00007f3a1bfff640 (most recent call first):\n"
        + "".join(f'  File "/x/sglang/srt/managers/scheduler.py", line {600 + i} in event_loop_overlap\n'
                  for i in range(20))
        + "\nExtension modules: numpy.core._multiarray_umath, torch._C, zmq.backend.cython._zmq (total: 112)\n")
CLOSING = ("[2026-12-07 00:30:01] Subprocess scheduler_2 (pid=9399) crashed with exit code -6. Triggering "
           "SIGQUIT for cleanup...\n"
           "[2026-12-07 00:30:01] Received sigquit from a child process. It usually means the child failed.\n")
READY = "[2026-12-07 00:20:00] The server is fired up and ready to roll!\n"


def test_a_collective_timeout_that_terminated_a_rank_is_nccl():
    log = READY + TERMINATE + DUMP + CLOSING
    assert classify_log(log, -9, "running") == "nccl"
    assert "Watchdog caught collective operation timeout" in error_line(log)


def test_a_python_traceback_after_the_terminate_still_decides():
    after = ("[2026-12-07 00:30:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
             '  File "/x/sglang/srt/model_executor/model_runner.py", line 1, in forward\n'
             "    x = f()\n"
             "ValueError: boom\n")
    assert classify_log(READY + TERMINATE + after, 1, "running") == "crash_after_ready"
    assert error_line(READY + TERMINATE + after) == "ValueError: boom"


# A ready server whose process then ends as the NCCL watchdog ends a rank: the C++ report on stderr,
# then abort() with faulthandler on (a real "Fatal Python error: Aborted" and thread dump).
SERVER = textwrap.dedent(r'''
    import faulthandler, os, resource, sys, time

    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # abort() leaves no core file wherever CI runs

    report, folder, port = open(sys.argv[2]).read(), sys.argv[3], int(sys.argv[1])
''') + HEALTHY_THREAD_PY + textwrap.dedent(r'''
    print("The server is fired up and ready to roll!", flush=True)
    while not os.path.exists(os.path.join(folder, "go")):
        time.sleep(0.02)
    sys.stderr.write(report)
    sys.stderr.flush()
    faulthandler.enable()

    def deep(n):
        if n == 0:
            os.abort()
        deep(n - 1)

    deep(20)
''')


def test_a_server_ended_by_the_nccl_watchdog_after_ready_fails_nccl(tmp_path):
    report = tmp_path / "report.txt"
    report.write_text(TERMINATE)
    srv = script_server(tmp_path, SERVER, str(report), str(tmp_path))
    failure_class, message = struck_after_ready(srv, tmp_path / "go")
    assert "Fatal Python error: Aborted" in srv.log_text()  # faulthandler's dump came after the report
    assert srv.returncode == -6
    assert failure_class == "nccl"
    assert "Watchdog caught collective operation timeout" in message
