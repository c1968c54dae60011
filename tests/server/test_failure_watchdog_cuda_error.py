"""PyTorch's NCCL watchdog ends a TP rank whose GPU work failed -- "Process group watchdog thread
terminated with exception: CUDA error: an illegal memory access was encountered", logged by
ProcessGroupNCCL.cpp and thrown as ``c10::DistBackendError`` (sgl-project/sglang issues 6309, with
EAGLE, 8296 and 8336) -- a kernel's fault the watchdog noticed, no communication error. The failure
class is not ``nccl`` (``crash_after_ready`` after ready) and the error line is the one naming the CUDA
error (tuner/server/failures.py, ``_WATCHDOG_CUDA_ERROR``). QA (qa152): such a crash was ``nccl``,
quoting "terminate called after throwing an instance of 'c10::DistBackendError'". A collective timeout
the watchdog caught stays ``nccl`` (tests/server/test_failure_cpp_terminate.py), and a CUDA
out-of-memory it reports ``oom``."""

from __future__ import annotations

import pytest

from tuner.server.failures import classify_log, error_line

READY = ("[2026-12-07 03:00:00] The server is fired up and ready to roll!\n"
         "[2026-12-07 03:00:01 TP1] Decode batch\n")
WHAT = ("[PG ID 2 PG GUID 3 Rank 1] Process group watchdog thread terminated with exception: "
        "CUDA error: {error}")
LOGGED = "[rank1]:[E519 05:58:22.475481966 ProcessGroupNCCL.cpp:1595] " + WHAT + "\n"
TERMINATE = ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
             "  what():  " + WHAT + "\n")
REST = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
        "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
        "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n\n"
        "Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43 (most "
        "recent call first):\n"
        "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f8416d6c1b6 in libc10.so)\n"
        "frame #3: c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x56 (0x7f83 in "
        "libtorch_cuda.so)\n"
        "frame #5: c10d::ProcessGroupNCCL::watchdogHandler() + 0x1da (0x7f304a231b5a in libtorch_cuda.so)\n\n"
        "Fatal Python error: Aborted\n\n"
        "[2026-12-07 03:00:05] Subprocess scheduler_1 (pid=9399) crashed with exit code -6. Triggering "
        "SIGQUIT for cleanup...\n"
        "[2026-12-07 03:00:05] Received sigquit from a child process. It usually means the child failed.\n")
ILLEGAL = "an illegal memory access was encountered"


@pytest.mark.parametrize("logged", [True, False], ids=["logged-and-thrown", "thrown"])
def test_a_cuda_error_the_watchdog_noticed_is_no_communication_error(logged):
    log = READY + (LOGGED.format(error=ILLEGAL) if logged else "") + TERMINATE.format(error=ILLEGAL) + REST
    assert classify_log(log, -9, "running") == "crash_after_ready"
    line = error_line(log)
    said = "Process group watchdog thread terminated with exception: CUDA error: " + ILLEGAL
    assert line.endswith(said), line


def test_an_out_of_memory_it_noticed_is_oom():
    log = READY + TERMINATE.format(error="out of memory") + REST
    assert classify_log(log, -9, "running") == "oom"
