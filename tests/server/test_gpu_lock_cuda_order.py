"""The GPU lock of a real launch on a node mixing GPU models, under CUDA's device order.

CUDA numbers the GPUs fastest first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (CUDA C Programming
Guide, "CUDA Environment Variables"): on the node of :data:`support.gpu_node.MIXED` (an A100 at
nvidia-smi's index 0, an H100 at 1), a server shown ``CUDA_VISIBLE_DEVICES=0`` runs on the H100. QA
(qa187): its lock was taken as GPU 0, and a tuner naming the H100 by its UUID took GPU 1's lock at
the same moment: two servers on one GPU. The seam: the fake ``nvidia-smi`` on PATH; the server is the
stand-in, launched for real with ``server.backend: sglang``."""

from __future__ import annotations

import os
import threading
import time

from support.gpu_node import gpu_node
from support.processes import STARTED_GROUPS
from support.standin import standin_python

from tuner.config.study import ServerSettings
from tuner.server.gpu_lock import GpuLock
from tuner.server.launcher import ServerProcess
from tuner.server.ports import pick_free_port

H100_UUID = "GPU-bbbb"  # nvidia-smi's GPU 1 on the MIXED node: CUDA's device 0 under its default order
TIMEOUT_S = 90.0  # a loaded machine: generous, never a measure of speed


def launch(tmp_path, env: dict) -> ServerProcess:
    data = {"backend": "sglang", "python": str(standin_python(tmp_path)), "model_path": "org/model",
            "tp_size": 1, "host": "127.0.0.1", "startup_timeout_s": 120, "stop_grace_s": 10, "env": env}
    srv = ServerProcess(ServerSettings.model_validate(data), None, workdir=tmp_path / "w",
                        port=pick_free_port("127.0.0.1"), study="by-index")
    srv.start()
    STARTED_GROUPS.add(srv.pgid)
    return srv


def other_tuner_on(gpu: str) -> tuple[GpuLock, threading.Thread, list[str]]:
    """Another tuner's lock on ``gpu``, taken in a thread; the lines it says."""
    said: list[str] = []
    lock = GpuLock([gpu], directory=os.environ["TUNER_GPU_LOCK_DIR"], say=said.append, poll_s=0.05)
    thread = threading.Thread(target=lock.acquire, daemon=True)
    thread.start()
    return lock, thread, said


def test_an_index_under_cuda_s_default_order_keeps_a_uuid_of_the_same_gpu_out(tmp_path, monkeypatch):
    gpu_node(tmp_path, monkeypatch)  # CUDA_DEVICE_ORDER unset: CUDA's default, fastest first
    srv = launch(tmp_path, {"CUDA_VISIBLE_DEVICES": "0"})
    try:
        lock, thread, said = other_tuner_on(H100_UUID)
        try:
            # it says it waits for the server's lock (or, the bug, takes GPU 1 at once)
            deadline = time.monotonic() + TIMEOUT_S
            while not (said or lock.held) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not lock.held and any("waiting for GPUs GPU-bbbb: another tuner holds them" in line
                                         for line in said), said
        finally:
            srv.stop()
            thread.join(TIMEOUT_S)
            assert lock.held  # taken once the server let every GPU go
            lock.release()
    finally:
        srv.stop()


def test_with_pci_bus_order_an_index_locks_that_gpu_alone(tmp_path, monkeypatch):
    # CUDA_DEVICE_ORDER=PCI_BUS_ID in server.env: CUDA's 0 is nvidia-smi's 0 (the A100); the H100 is
    # another GPU, free for another tuner while the server runs
    gpu_node(tmp_path, monkeypatch)
    srv = launch(tmp_path, {"CUDA_VISIBLE_DEVICES": "0", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    try:
        lock, thread, said = other_tuner_on(H100_UUID)
        thread.join(TIMEOUT_S)
        assert lock.held and not said
        lock.release()
    finally:
        srv.stop()
