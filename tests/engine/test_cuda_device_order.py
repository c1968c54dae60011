"""Which GPU a server named by index runs on, on a node mixing GPU models, under CUDA's default order.

CUDA numbers the GPUs fastest first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (CUDA C Programming Guide,
"CUDA Environment Variables"); nvidia-smi's index is the PCI order. On a node whose GPU 0 (PCI) is an
A100 and GPU 1 an H100, a server with ``CUDA_VISIBLE_DEVICES=1`` runs on the A100 (CUDA's device 1),
unset or ``0`` on the H100. The tuner read CUDA's index as nvidia-smi's: the study's GPU generation
was the H100's for a server on the A100 (an MLA study pinned fa3, which SGLang refuses on sm80), and
the baseline recorded the A100 for a server on the H100 (QA, qa174). Now an index on such a node is
placed only in the PCI order (the study's ``server.env`` or the tuner's own environment); else the
generation and hardware are unknown, as for any GPU that cannot be placed. A GPU named by UUID, a node
of one model, or every GPU of the node reads as before. A stand-in nvidia-smi (a real process on
PATH) lists the node.
"""

from __future__ import annotations


import pytest
from support.demo_study import demo_study
from support.gpu_node import H100, MIXED
from support.gpu_node import gpu_node as node

from tuner.config.study import load_study
from tuner.engine.facts import gather_facts, node_hardware



def server(tmp_path, env: dict):
    return load_study(demo_study(tmp_path, **{"server.backend": "sglang", "server.tp_size": 1,
                                              "server.env": env})).server


@pytest.mark.parametrize("visible", ["1", "0", None])
def test_an_index_on_a_mixed_node_in_cuda_s_default_order_is_not_taken_for_nvidia_smi_s(
        tmp_path, monkeypatch, visible):
    node(tmp_path, monkeypatch, MIXED)
    config = server(tmp_path, {} if visible is None else {"CUDA_VISIBLE_DEVICES": visible})
    assert gather_facts(config).gpu is None
    assert node_hardware(config, None) is None


def test_the_pci_order_or_a_uuid_places_it(tmp_path, monkeypatch):
    node(tmp_path, monkeypatch, MIXED)
    pci = server(tmp_path, {"CUDA_VISIBLE_DEVICES": "1", "CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
    assert str(gather_facts(pci).gpu) == "9.0"
    assert node_hardware(pci, None)["name"] == H100
    by_uuid = server(tmp_path, {"CUDA_VISIBLE_DEVICES": "GPU-bbbb"})
    assert str(gather_facts(by_uuid).gpu) == "9.0"
    assert node_hardware(by_uuid, None)["name"] == H100
    monkeypatch.setenv("CUDA_DEVICE_ORDER", "PCI_BUS_ID")  # the tuner's own environment, as the server's
    assert str(gather_facts(server(tmp_path, {"CUDA_VISIBLE_DEVICES": "0"})).gpu) == "8.0"


def test_a_node_of_one_model_reads_as_before_in_any_order(tmp_path, monkeypatch):
    node(tmp_path, monkeypatch, [(i, H100, "9.0", f"GPU-{i}") for i in "01"])
    config = server(tmp_path, {"CUDA_VISIBLE_DEVICES": "1"})
    assert str(gather_facts(config).gpu) == "9.0"
    assert node_hardware(config, None) == {"name": H100, "count": 1, "memory_total_mib": 81559,
                                           "compute_cap": "9.0"}
