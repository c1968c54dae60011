"""An exception whose class name ends neither in Error nor in Exception is the failure line when Python
prints it module-qualified (tuner/server/failures.py, ``_EXCEPTION_LINE``). QA (qa160): a scheduler dead of
Triton's "triton.runtime.errors.OutOfResources: out of resource: shared memory ..." in its CUDA-graph
capture (sgl-project/sglang issue 2384) was quoted as SGLang's closing "kill_process_tree called: ..."."""

import pytest

from tuner.server.failures import classify_log, error_line

LOADING = ("[2026-12-07 03:30:01 TP0] Load weight begin. avail mem=78.50 GB\n"
           "[2026-12-07 03:31:42 TP0] Capture cuda graph begin. This can take up to several minutes.\n")
CLOSING = ("[2026-12-07 03:31:50] Received sigquit from a child process. It usually means the child failed.\n"
           "[2026-12-07 03:31:50] kill_process_tree called: parent_pid=4121, include_parent=True, pid=4121\n")


def died(exception: str) -> str:
    return (LOADING + "[2026-12-07 03:31:50 TP5] Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File "/x/sglang/srt/managers/scheduler.py", line 6362, in run_scheduler_process\n'
            "    scheduler = Scheduler(server_args, port_args)\n"
            '  File "/x/triton/compiler/compiler.py", line 385, in _init_handles\n'
            '    raise OutOfResources(self.metadata.shared, max_shared, "shared memory")\n'
            + exception + "\n\n" + CLOSING)


@pytest.mark.parametrize("exception", [
    "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 131072, Hardware limit: "
    "65536. Reducing block sizes or `num_stages` may help.",
    "torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:",
], ids=["triton out of resources", "dynamo backend failed"])
def test_a_qualified_exception_is_the_failure_line(exception):
    log = died(exception)
    assert error_line(log) == exception
    # shared memory per block is no GPU memory: not ``oom``
    assert classify_log(log, 1, "startup") == "other"


def test_a_qualified_warning_is_no_failure_line():
    log = LOADING + "torch.distributed.elastic.DistWarning: x\n" + CLOSING
    assert error_line(log) == CLOSING.splitlines()[-1]
