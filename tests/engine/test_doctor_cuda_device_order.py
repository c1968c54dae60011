"""``tuner doctor``'s GPU check on a node mixing GPU models under CUDA's default device order.

CUDA numbers the GPUs fastest first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (CUDA C Programming
Guide, "CUDA Environment Variables"); nvidia-smi's index is the PCI order. QA (qa190): on a node
whose PCI GPU 0 is an A100 and GPU 1 an H100 (held by another process), ``CUDA_VISIBLE_DEVICES=0``
passed as ``... 1 needed (GPUs 0: NVIDIA A100-SXM4-80GB), memory free``: the server would run on the
H100 (CUDA's device 0), whose memory was never looked at. Now the check warns, naming the fix. A
stand-in nvidia-smi (a real process on PATH, support.gpu_node) lists the node.
"""

from __future__ import annotations

import pytest
from support.demo_study import demo_study
from support.gpu_node import H100, MIXED
from support.gpu_node import gpu_node as node

from tuner.config.study import load_study
from tuner.engine.doctor import PASS, WARN, check_gpus


def gpus_check(tmp_path, env: dict, tp: int = 1):
    return check_gpus(load_study(demo_study(tmp_path, **{"server.backend": "sglang", "server.tp_size": tp,
                                                         "server.env": env})))


@pytest.mark.parametrize("env", [{"CUDA_VISIBLE_DEVICES": "0"}, {"CUDA_VISIBLE_DEVICES": "1"}, {}])
def test_an_index_on_a_mixed_node_in_cuda_s_default_order_is_warned_of_with_the_fix(tmp_path, monkeypatch, env):
    node(tmp_path, monkeypatch, MIXED)
    check = gpus_check(tmp_path, env)
    assert check.status == WARN, check.line()  # before the fix: pass, "GPUs 0: NVIDIA A100-SXM4-80GB"
    assert "fastest first" in check.message and "set server.env.CUDA_DEVICE_ORDER: PCI_BUS_ID" in check.message
    assert "memory free" not in check.message


def test_the_pci_order_a_uuid_the_whole_node_or_one_model_is_judged_as_before(tmp_path, monkeypatch):
    node(tmp_path, monkeypatch, MIXED)
    pci = gpus_check(tmp_path, {"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    assert pci.status == PASS and f"(GPUs 1: {H100})" in pci.message, pci.line()
    by_uuid = gpus_check(tmp_path, {"CUDA_VISIBLE_DEVICES": "GPU-bbbb"})
    assert by_uuid.status == PASS and f"(GPUs 1: {H100})" in by_uuid.message, by_uuid.line()
    whole = gpus_check(tmp_path, {}, tp=2)  # every GPU of the node is the server's, in any order
    assert whole.status == PASS and "memory free" in whole.message, whole.line()
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")  # the tuner's own environment, as the server's
    assert gpus_check(tmp_path, {"CUDA_VISIBLE_DEVICES": "0"}).status == PASS
    monkeypatch.delenv("CUDA_DEVICE_ORDER")
    node(tmp_path, monkeypatch, [(i, H100, "9.0", f"GPU-{i}") for i in "01"])
    same = gpus_check(tmp_path, {"CUDA_VISIBLE_DEVICES": "1"})
    assert same.status == PASS and "(GPUs 1)" in same.message, same.line()
