"""The first rank to die decides the class and the error line whatever it died of, not only when it ran
out of memory (tuner/server/failures.py, ``deciding_region``). QA (qa160, qa165): at TP4, rank 3's
scheduler died of "RuntimeError: CUDA error: an illegal memory access was encountered"; rank 0, waiting
on it in the store, died next of "torch.distributed.DistStoreError: Socket Timeout"; the trial was
``nccl``, quoting rank 0."""

from __future__ import annotations

from tuner.server.failures import classify_log, error_line

SITE = "/usr/local/lib/python3.12/dist-packages"
LOADING = "[2026-12-07 00:02:30 TP0] Load weight begin. avail mem=78.50 GB\n"
ILLEGAL = "RuntimeError: CUDA error: an illegal memory access was encountered"
CLOSING = ("[2026-12-07 00:03:04] Received sigquit from a child process. It usually means the child failed.\n"
           "[2026-12-07 00:03:04] kill_process_tree called: parent_pid=4121, include_parent=True, pid=4121\n")


def died(rank: int, path: str, code: str, exception: str, tail: str = "") -> str:
    """One scheduler's death record, as managers/scheduler.py logs it (shortened)."""
    return (f"[2026-12-07 00:02:34 TP{rank}] Scheduler hit an exception: Traceback (most recent call last):\n"
            f'  File "{SITE}/sglang/srt/managers/scheduler.py", line 6362, in run_scheduler_process\n'
            "    scheduler.event_loop_overlap()\n"
            f'  File "{SITE}/sglang/srt/{path}", line 412, in f\n    {code}\n{exception}\n{tail}\n')


RANK3 = died(3, "model_executor/model_runner.py", "logits_output = self.forward(batch)", ILLEGAL,
             "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
             "below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\n")
RANK0 = died(0, "distributed/parallel_state.py", "torch.distributed.barrier(group=self.cpu_group)",
             "torch.distributed.DistStoreError: Socket Timeout")


def test_first_rank_illegal_memory_access_decides_over_peer_store_timeout():
    log = LOADING + RANK3 + RANK0 + CLOSING
    assert classify_log(log, -9, "startup") == "other"
    assert classify_log(log, -9, "running") == "crash_after_ready"
    assert error_line(log) == ILLEGAL


def test_first_rank_value_error_in_a_scheduler_is_not_an_argument_error_of_a_peer():
    # the first rank's own frames decide: a scheduler's ValueError outside the argument handling
    first = died(2, "layers/attention/flashinfer_mla_backend.py", "raise ValueError(msg)",
                 "ValueError: Currently Flashinfer MLA only supports topk=1 for speculative decoding")
    log = first + RANK0 + CLOSING
    assert classify_log(log, -9, "startup") == "other"
    assert error_line(log).startswith("ValueError: Currently Flashinfer MLA")


def test_first_rank_nccl_error_stays_nccl():
    first = died(3, "model_executor/model_runner.py", "self.forward(batch)",
                 "RuntimeError: NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)")
    log = LOADING + first + RANK0 + CLOSING
    assert classify_log(log, -9, "startup") == "nccl"
    assert error_line(log).startswith("RuntimeError: NCCL error")


def test_out_of_memory_where_the_log_ends_is_kept_over_a_first_generic_error():
    # keeps what oom fences: a first rank's CUDA error does not turn a later out-of-memory into `other`
    oom = died(0, "model_executor/pool_configurator.py", "self.req_to_token_pool = ReqToTokenPool(",
               "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.00 GiB.")
    log = LOADING + RANK3 + oom + CLOSING
    assert classify_log(log, -9, "startup") == "oom"
