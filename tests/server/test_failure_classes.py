"""Failure classes from where SGLang fails (tuner/server/failures.py), one test per class, each on log
text built from SGLang 0.5.23's own strings (the source file of each is named beside it)."""

import pytest

from tuner.server.failures import classify_log, error_line, failure_region

# model_runner.py: "Load weight begin. avail mem=... GB" / "Load weight end. ..."
LOADING = ("[2026-12-01 10:00:00] Load weight begin. avail mem=78.50 GB\n"
           "[2026-12-01 10:09:00] Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16\n")
# layers/deep_gemm_wrapper/compile_utils.py, _compile_deep_gemm_one_type_all: a warning, not a failure
DEEPGEMM_WARNING = ("[2026-12-01 10:09:30] WARNING Available memory 3.1GB is less than required memory "
                    "6.2GB for warmup, reducing max_m to 4096 to avoid out of memory\n")
# managers/scheduler.py, run_scheduler_process: logger.error(f"Scheduler hit an exception: {traceback}")
SCHEDULER = "[2026-12-01 10:10:00] ERROR Scheduler hit an exception: Traceback (most recent call last):\n"
# entrypoints/engine.py, launch_phase_sigquit_handler
SIGQUIT = "[2026-12-01 10:10:00] ERROR Received sigquit from a child process. It usually means the child failed.\n"


def crash(frame: str, exception: str) -> str:
    return f'{SCHEDULER}  File "{frame}", line 1, in f\n{exception}\n{SIGQUIT}'


def test_invalid_args_argparse_and_argument_handling():
    # srt/server_args.py, prepare_server_args: argparse.ArgumentParser(prog="sglang serve"), exit 2
    usage = "usage: sglang serve [-h] --model-path MODEL_PATH\nsglang serve: error: unrecognized arguments: --bogus 1\n"
    assert classify_log(usage, 2, "startup") == "invalid_args"
    # arg_groups/speculative_hook.py, _handle_eagle_family: trtllm_mha with topk > 1
    tb = ('Traceback (most recent call last):\n  File "/x/sglang/srt/arg_groups/speculative_hook.py", line 1178, '
          'in _handle_eagle_family\nValueError: trtllm_mha backend only supports topk = 1 for speculative decoding.\n')
    assert classify_log(tb, 1, "startup") == "invalid_args"


def test_oom_where_the_scheduler_died():
    # model_executor/pool_configurator.py: "Not enough memory. Please try to increase --mem-fraction-static."
    log = LOADING + crash("/x/sglang/srt/model_executor/pool_configurator.py",
                          "RuntimeError: Not enough memory. Please try to increase --mem-fraction-static. "
                          "Current value: mem_fraction_static=0.85")
    assert classify_log(log, 1, "startup") == "oom"
    assert "Not enough memory" in error_line(log)


@pytest.mark.parametrize("message", [
    # model_executor/pool_configurator.py lines 1025-1030 (SWA models) and 1679-1685 (DSV4): the KV
    # pool gets no memory at all, "Not enough memory" in other words (QA: classed "other")
    "RuntimeError: SWA pool cap (65536 tokens, 9.50 GiB) leaves no room for the full KV pool within the "
    "available 8.20 GiB. Reduce --max-running-requests, lower SGLANG_SWA_EVICTION_INTERVAL, or increase "
    "--mem-fraction-static.",
    "RuntimeError: The DSV4 SWA pool cap (65536 tokens, 9.50 GB) leaves no room for the full KV pool within "
    "the available 8.20 GB. Reduce --max-running-requests, lower --swa-prefix-tails or "
    "SGLANG_SWA_EVICTION_INTERVAL, or increase --mem-fraction-static.",
])
def test_oom_when_the_swa_pool_leaves_the_kv_pool_no_room(message):
    log = LOADING + crash("/x/sglang/srt/model_executor/pool_configurator.py", message)
    assert classify_log(log, 1, "startup") == "oom"
    assert "leaves no room for the full KV pool" in error_line(log)


def test_deepgemm_warning_earlier_in_the_log_is_not_oom():
    # the false oom: the warning says "out of memory", the crash is the MLA draft backend's
    # ValueError (layers/attention/flashinfer_mla_backend.py), after loading: `other`, not `oom`
    log = LOADING + DEEPGEMM_WARNING + crash(
        "/x/sglang/srt/layers/attention/flashinfer_mla_backend.py",
        "ValueError: Currently Flashinfer MLA only supports topk=1 for speculative decoding")
    assert classify_log(log, 1, "startup") == "other"
    assert "Flashinfer MLA only supports topk=1" in error_line(log)
    assert "avoid out of memory" not in failure_region(log)
    # the same warning in a log that then really runs out of memory is still oom
    oom = LOADING + DEEPGEMM_WARNING + crash("/x/sglang/srt/model_executor/pool_configurator.py",
                                             "RuntimeError: Not enough memory. Please try to increase "
                                             "--mem-fraction-static.")
    assert classify_log(oom, 1, "startup") == "oom"


def test_nccl():
    # distributed/device_communicators/pynccl_wrapper.py, NCCL_CHECK: raise RuntimeError(f"NCCL error: {error_str}")
    log = LOADING + crash("/x/sglang/srt/distributed/device_communicators/pynccl_wrapper.py",
                          "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")
    assert classify_log(log, 1, "startup") == "nccl"


def test_spec_runtime_in_the_draft_cuda_graph_capture():
    # speculative/eagle_draft_cuda_graph_runner.py wraps the capture's RuntimeError; the text after it
    # is runner_backend_utils/__init__.py's CUDA_GRAPH_CAPTURE_FAILED_MSG (mentions memory, is not oom)
    log = LOADING + crash(
        "/x/sglang/srt/speculative/eagle_draft_cuda_graph_runner.py",
        "Exception: Capture cuda graph failed: selected index k out of range\nPossible solutions:\n"
        "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
        "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\n"
        "3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled. (Not recommended. Huge "
        "performance loss)\nOpen an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose ")
    assert classify_log(log, 1, "startup") == "spec_runtime"
    assert "selected index k out of range" in error_line(log)


def test_timeout_crash_after_ready_and_other():
    assert classify_log(LOADING, None, "startup") == "startup_timeout"
    # a crash with no traceback: the final lines decide, not a warning logged long before
    log = LOADING + DEEPGEMM_WARNING + "\n".join(
        f"[2026-12-01 10:11:{i:02d}] INFO Decode batch. #running-req: 1" for i in range(20)) + "\nKilled\n"
    assert classify_log(log, -9, "running") == "crash_after_ready"
    assert classify_log(LOADING + "Segmentation fault\n", -11, "startup") == "other"


@pytest.mark.parametrize("text", ["", "one line"])
def test_region_of_short_text_is_the_text(text):
    assert failure_region(text) == text


@pytest.mark.parametrize("before", [
    "",  # server.args log_level: warning (or error): SGLang's INFO lines are not logged
    "[2026-12-01 10:00:00] Init parallel begin.\n",  # distributed/bootstrap.py line 115
])
def test_a_failure_after_argument_handling_is_no_argument_error_whatever_was_logged_before(before):
    # SGLang 0.5.23 handles the arguments in the launching process (launch_server.py, prepare_server_args
    # and resolve_once); a scheduler's exception comes after it (managers/scheduler.py line 6372, an
    # ERROR line: logged at every log level). It logs no "Init torch distributed begin" nor "Capture
    # cuda graph begin", and "Load weight begin" is INFO: the class read invalid_args for the MLA draft
    # backend's refusal (layers/attention/flashinfer_mla_backend.py line 1198) once they were missing.
    log = before + crash("/x/sglang/srt/layers/attention/flashinfer_mla_backend.py",
                         "ValueError: Currently Flashinfer MLA only supports topk=1 for speculative decoding")
    assert classify_log(log, 1, "startup") == "other"
    # through SGLang's argument handling it stays an argument error, in a scheduler too
    log = before + crash("/x/sglang/srt/arg_groups/speculative_hook.py", "ValueError: bad speculative flags")
    assert classify_log(log, 1, "startup") == "invalid_args"


# Lines a server may print without a newline (a progress bar redrawn with \r, a dumped tensor, a
# repeated word), each made of the pieces the patterns look for, so a pattern that rescans a line from
# every start would take hours on it.
HOSTILE_FILLERS = ["y", "1", "Error", "Exception", "File \"", "ProcessGroupNCCL", "ProcessGroupNCCL ",
                   "nccl", "Capture ", "Capture a", "a.", "usage: ", ": error: ", "a hit"]


def test_a_megabyte_line_of_any_filler_is_classified_and_its_failure_still_found():
    """Classification runs on whole logs; one megabyte line of any filler before the failure leaves
    the class and the error line what they are without it. Run in a child with a timeout a hundred
    times what it needs, so a pattern gone quadratic fails here instead of hanging the suite."""
    import subprocess
    import sys
    code = f"""
from tuner.server.failures import classify_log, error_line
fillers = {HOSTILE_FILLERS!r}
failure = ('Traceback (most recent call last):\\n  File "/x/sglang/srt/server_args.py", line 1, in f\\n'
           'ValueError: bad --speculative-eagle-topk\\n')
for filler in fillers:
    line = (filler * (1_000_000 // len(filler) + 1))[:1_000_000]
    print(classify_log(line + "\\n" + failure, 1, "startup"), classify_log(line, 1, "startup"),
          error_line(line + "\\n" + failure))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    rows = out.stdout.splitlines()
    assert len(rows) == len(HOSTILE_FILLERS)
    for filler, row in zip(HOSTILE_FILLERS, rows):
        assert row.startswith("invalid_args ") and row.endswith(" ValueError: bad --speculative-eagle-topk"), (filler, row)
        assert row.split()[1] == "other", (filler, row)  # the filler alone is no evidence of any class


def test_a_log_that_begins_with_its_traceback_is_classified_from_it():
    """A server that fails at once (an import, the first CUDA call) logs a traceback as its first line:
    that traceback is the failure region, even when more than :data:`FINAL_LINES` lines follow it."""
    from tuner.server.failures import FINAL_LINES

    log = ('Traceback (most recent call last):\n  File "/x/sglang/srt/model_executor/model_runner.py", line 1, in f\n'
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
           + "".join(f"[2026-12-01 10:10:{i:02d}] Killed process {i}\n" for i in range(FINAL_LINES + 3)))
    assert classify_log(log, 1, "startup") == "oom"
    assert "CUDA out of memory" in error_line(log)


def test_a_tail_keeps_a_line_of_exactly_the_cap_whole():
    from tuner.server.failures import LOG_LINE_CHARS, tail_lines

    line = "x" * LOG_LINE_CHARS
    assert tail_lines(line) == line
    assert tail_lines(line + "y") == f"[... 1 chars cut] {('x' * (LOG_LINE_CHARS - 1)) + 'y'}"
