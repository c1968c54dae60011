"""Failures to set the ranks' communication up are ``nccl`` (tuner/server/failures.py, ``_NCCL``). SGLang's
TP ranks rendezvous through torch.distributed's TCPStore (distributed/bootstrap.py, init_distributed_environment
with ``timeout=dist_timeout``), then ProcessGroupNCCL fetches the ncclUniqueId from rank 0 through that store.
QA (qa152): TCPStore's "DistStoreError: Timed out after 601 seconds waiting for clients" (sgl-project/sglang
issue 507) and the ncclUniqueId fetch's "Connection reset by peer" were ``other``. A port clash of the store
(DistNetworkError, EADDRINUSE) stays no communication error."""

import pytest

from tuner.server.failures import classify_log, error_line

LOADING = "[2026-12-07 03:30:01 TP0] Init parallel begin.\n"
CLOSING = ("[2026-12-07 03:40:02] Received sigquit from a child process. It usually means the child failed.\n"
           "[2026-12-07 03:40:02] kill_process_tree called: parent_pid=4121, include_parent=True, pid=4121\n")


def died(exception: str) -> str:
    """A launch whose TP0 scheduler died of ``exception`` setting up torch.distributed."""
    return (LOADING + "[2026-12-07 03:40:02 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File "/x/sglang/srt/managers/scheduler.py", line 6362, in run_scheduler_process\n'
            "    scheduler = Scheduler(server_args, port_args)\n"
            '  File "/x/sglang/srt/distributed/bootstrap.py", line 322, in _init_parallel_groups\n'
            "    init_distributed_environment(\n"
            '  File "/x/torch/distributed/rendezvous.py", line 174, in _create_c10d_store\n'
            "    return TCPStore(\n" + exception + "\n\n" + CLOSING)


@pytest.mark.parametrize("exception", [
    "torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 1/2 clients joined.",
    "torch.distributed.DistStoreError: Socket Timeout",
    "RuntimeError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value "
    "store by key '0', but store->get('0') got error: Connection reset by peer. This may indicate a possible "
    "application crash on rank 0 or a network set up issue.",
    "RuntimeError: [1] is setting up NCCL communicator and retreiving ncclUniqueId from [0] via c10d key-value "
    "store by key '0', but store->get('0') got error: Socket Timeout",
], ids=["store waiting for clients", "store socket timeout", "uniqueid reset", "uniqueid timeout (old torch)"])
def test_a_failed_communication_setup_is_nccl(exception):
    log = died(exception)
    assert classify_log(log, 1, "startup") == "nccl"
    assert error_line(log) == exception[:300]


def test_a_store_port_clash_is_no_communication_error():
    exception = ("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
                 "address. port: 25731, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use")
    log = died(exception)
    assert classify_log(log, 1, "startup") == "other"
    assert error_line(log) == exception[:300]
