"""cuBLAS failing to allocate on the GPU is ``oom`` (tuner/server/failures.py, ``_OOM``): "RuntimeError: CUDA
error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`" at a first matmul once the KV pool took
the memory; SGLang 0.5.23 counts it as out of memory itself
(multimodal_gen/runtime/server_warmup.py, _OUT_OF_MEMORY_MARKERS). QA (qa152): it was ``other``, which fences
off no larger tree."""

from tuner.server.failures import classify_log, error_line

LOADING = ("[2026-12-07 03:30:01 TP0] Load weight begin. avail mem=78.50 GB\n"
           "[2026-12-07 03:31:42 TP0] Capture cuda graph begin. This can take up to several minutes.\n")
CLOSING = ("[2026-12-07 03:31:50] Received sigquit from a child process. It usually means the child failed.\n"
           "[2026-12-07 03:31:50] kill_process_tree called: parent_pid=4121, include_parent=True, pid=4121\n")


def test_a_failed_cublas_allocation_is_oom():
    exception = "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"
    log = (LOADING + "[2026-12-07 03:31:50 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
           '  File "/x/sglang/srt/managers/scheduler.py", line 6362, in run_scheduler_process\n'
           "    scheduler = Scheduler(server_args, port_args)\n"
           '  File "/x/torch/nn/modules/linear.py", line 116, in forward\n'
           "    return F.linear(input, self.weight, self.bias)\n" + exception + "\n\n" + CLOSING)
    assert classify_log(log, 1, "startup") == "oom"
    assert error_line(log) == exception


def test_another_cublas_status_is_not_oom():
    # CUBLAS_STATUS_EXECUTION_FAILED is a kernel's fault, no shortage of memory
    exception = "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, ...)`"
    log = LOADING + "Traceback (most recent call last):\n  File \"/x/a.py\", line 1, in f\n    g()\n" + exception + "\n"
    assert classify_log(log, 1, "startup") == "other"
