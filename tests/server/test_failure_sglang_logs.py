"""Failure lines the classifier missed (qa80), on logs shaped as SGLang 0.5.23 writes a failed launch: the
scheduler's "Scheduler hit an exception: Traceback ..." (managers/scheduler.py line 6372), the failed
CUDA-graph capture's bare ``Exception`` with CUDA_GRAPH_CAPTURE_FAILED_MSG after it
(model_executor/runner/decode_cuda_graph_runner.py line 602, runner_backend_utils/__init__.py line 14),
then the parent's closing lines (the sigquit handler, kill_process_tree). The causes are those of
sgl-project/sglang issues 4205 and 5883 (gloo's TCP transport inside "Capture cuda graph failed")."""

import pytest

from tuner.server.failures import classify_log, error_line

LOADING = ("[2026-12-05 03:10:01 TP0] Load weight begin. avail mem=78.50 GB\n"
           "[2026-12-05 03:11:42 TP0] Capture cuda graph begin. This can take up to several minutes.\n")
CAPTURE_FAILED_MSG = (
    "Possible solutions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\n"
    "3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled. (Not recommended. Huge performance loss)\n"
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n\n")
CLOSING = ("[2026-12-05 03:12:13] Received sigquit from a child process. It usually means the child failed.\n"
           "[2026-12-05 03:12:13] kill_process_tree called: parent_pid=4121, include_parent=True, pid=4121\n")


def capture_failed(cause: str) -> str:
    """A launch whose decode CUDA-graph capture failed with ``cause`` (a RuntimeError's text)."""
    return (LOADING + "[2026-12-05 03:12:13 TP1] Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File "/x/sglang/srt/model_executor/runner/decode_cuda_graph_runner.py", line 600, in __init__\n'
            "    self.capture()\n"
            f"RuntimeError: {cause}\n\n"
            "During handling of the above exception, another exception occurred:\n\n"
            "Traceback (most recent call last):\n"
            '  File "/x/sglang/srt/managers/scheduler.py", line 6362, in run_scheduler_process\n'
            "    scheduler = Scheduler(server_args, port_args)\n"
            '  File "/x/sglang/srt/model_executor/runner/decode_cuda_graph_runner.py", line 602, in __init__\n'
            "    raise Exception(\n"
            f"Exception: Capture cuda graph failed: {cause}\n" + CAPTURE_FAILED_MSG + CLOSING)


@pytest.mark.parametrize("cause, failure_class", [
    ("[../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.2]:39121", "nccl"),
    ("[/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 1800000ms for send "
     "operation to complete", "nccl"),
    ("CUDA error: an illegal memory access was encountered", "other"),
], ids=["gloo connection closed", "gloo send timed out", "illegal memory access"])
def test_a_failed_capture_is_said_by_its_exception_line(cause, failure_class):
    # QA: the bare "Exception: ..." line was no failure line: the message was the parent's
    # "kill_process_tree called: ..." and gloo's communication errors were "other"
    log = capture_failed(cause)
    assert error_line(log) == f"Exception: Capture cuda graph failed: {cause}"[:300]
    assert classify_log(log, 1, "startup") == failure_class


def test_a_keyboard_interrupt_is_the_failure_line():
    log = (LOADING + "Traceback (most recent call last):\n"
           '  File "/x/sglang/srt/entrypoints/engine.py", line 2024, in _wait_for_scheduler_ready\n'
           "    if scheduler_pipe_readers[i].poll(timeout=5.0):\n"
           "KeyboardInterrupt\n" + CLOSING)
    assert error_line(log) == "KeyboardInterrupt"
    assert classify_log(log, 1, "startup") == "other"


def test_a_warning_is_no_failure_line():
    # a warning stops nothing: the line that says why the server failed is still the exception's
    log = capture_failed("CUDA error: an illegal memory access was encountered") + (
        "/usr/lib/python3.12/multiprocessing/resource_tracker.py:279: UserWarning: resource_tracker: There appear "
        "to be 1 leaked semaphore objects to clean up at shutdown\n")
    assert error_line(log).startswith("Exception: Capture cuda graph failed")


@pytest.mark.parametrize("exception, frame, failure_class", [
    # arg_groups/kv_cache_hook.py line 128
    ("RuntimeError: --kv-cache-dtype=nvfp4 requires Blackwell SM100 or SM120. Use --kv-cache-dtype=fp4_mx_block16 "
     "for the block-size-16 FP4 recipe.", "/x/sglang/srt/arg_groups/kv_cache_hook.py", "invalid_args"),
    # arg_groups/speculative_hook.py line 1216
    ("NotImplementedError: --speculative-use-rejection-sampling is only supported for EAGLE / EAGLE3 / NEXTN, not "
     "speculative_algorithm=STANDALONE.", "/x/sglang/srt/arg_groups/speculative_hook.py", "invalid_args"),
    # torch/cuda/__init__.py: before any loading line, but no argument of SGLang's
    ("RuntimeError: No CUDA GPUs are available", "/x/torch/cuda/__init__.py", "other"),
], ids=["nvfp4 kv cache off Blackwell", "rejection sampling off EAGLE", "no GPU"])
def test_runtime_errors_of_the_argument_handling_are_invalid_args(exception, frame, failure_class):
    # QA: SGLang 0.5.23's argument handling also refuses settings with RuntimeError and
    # NotImplementedError; they were "other", a failure the search could not learn to avoid
    log = ("Traceback (most recent call last):\n"
           '  File "/x/sglang/launch_server.py", line 28, in <module>\n'
           "    server_args = prepare_server_args(sys.argv[1:])\n"
           f'  File "{frame}", line 128, in resolve\n'
           f"{exception}\n")
    assert classify_log(log, 1, "startup") == failure_class
    assert error_line(log) == exception[:300]
