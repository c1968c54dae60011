"""The GPU generation a study's attention backend is chosen for is that of the GPU the server is
shown first (its CUDA_VISIBLE_DEVICES), not the node's GPU 0.

QA (qa167): on a node whose GPU 0 is an A100 and GPU 1 an H100, ``tuner doctor`` of an MLA study with
``server.env.CUDA_VISIBLE_DEVICES: "1"`` said ``GPUs: sm80 (Ampere/Ada)`` and pinned triton; the
reverse node pinned fa3 for a server on the A100, which SGLang refuses for MLA. A stand-in
nvidia-smi (a real process on PATH) lists the mixed node.
"""

from __future__ import annotations


import pytest
from support.demo_study import demo_study
from support.gpu_node import gpu_node as mixed_node

from tuner.config.study import load_study
from tuner.engine.facts import gather_facts

def gpu_of(tmp_path, visible: str | None) -> str | None:
    # CUDA numbers the GPUs as nvidia-smi does in the PCI order only (tests/engine/test_cuda_device_order.py)
    env = {"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}
    env.update({} if visible is None else {"CUDA_VISIBLE_DEVICES": visible})
    config = load_study(demo_study(tmp_path, **{"server.backend": "sglang", "server.env": env}))
    gpu = gather_facts(config.server).gpu
    return None if gpu is None else str(gpu)


@pytest.mark.parametrize("visible, cap", [
    ("1", "9.0"), ("1,0", "9.0"), ("GPU-bb", "9.0"), ("0,1", "8.0"),
    (None, "8.0"),                 # unset: CUDA shows the node's GPUs, GPU 0 first
    ("MIG-1234", None)])           # a MIG instance of either GPU: the generation cannot be told
def test_the_first_gpu_the_server_is_shown(tmp_path, monkeypatch, visible, cap):
    mixed_node(tmp_path, monkeypatch)
    assert gpu_of(tmp_path, visible) == cap


def test_a_node_of_one_generation_tells_it_for_any_entry(tmp_path, monkeypatch):
    mixed_node(tmp_path, monkeypatch, [(i, "NVIDIA H100 80GB HBM3", "9.0", f"GPU-{i}") for i in "01"])
    assert gpu_of(tmp_path, "MIG-1234") == "9.0"
