"""``tuner doctor``'s GPU check on a node of several GPU models says so, and names the server's.

QA (qa167): on a node whose GPU 0 is an A100 and GPU 1 an H100, with ``CUDA_VISIBLE_DEVICES=1`` the
check passed as ``2 x NVIDIA A100-SXM4-80GB (compute capability 8.0), 1 needed (GPUs 1), memory
free``: the node's first row for every GPU, the server's H100 unnamed. A stand-in nvidia-smi (a real
process on PATH) lists the node.
"""

from __future__ import annotations

import os

import pytest
from support.demo_study import demo_study
from support.fake_commands import counting_command

from tuner.config.study import load_study
from tuner.engine.doctor import PASS, check_gpus

A100, H100 = "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"


@pytest.fixture
def node(tmp_path, monkeypatch):
    def listing(rows):
        counting_command(tmp_path, "nvidia-smi", f"""\
            for name, cap in {rows!r}:
                print(f"{{name}}, {{cap}}, 81559, 81000")
            """)
        monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return listing


def gpus_line(tmp_path, visible: str) -> str:
    # in the PCI order, nvidia-smi's: under CUDA's default an index names no known GPU on a mixed
    # node (test_doctor_cuda_device_order.py)
    path = demo_study(tmp_path, **{"server.backend": "sglang", "server.tp_size": 1,
                                   "server.env": {"CUDA_VISIBLE_DEVICES": visible,
                                                  "CUDA_DEVICE_ORDER": "PCI_BUS_ID"}})
    check = check_gpus(load_study(path))
    assert check.status == PASS, check.message
    return check.message


def test_a_mixed_node_is_said_as_such_and_the_server_s_gpu_named(tmp_path, node):
    node([(A100, "8.0"), (H100, "9.0")])
    both = f"1 x {A100} (compute capability 8.0) + 1 x {H100} (compute capability 9.0)"
    assert gpus_line(tmp_path, "1") == f"{both}, 1 needed (GPUs 1: {H100}), memory free"
    assert gpus_line(tmp_path, "0") == f"{both}, 1 needed (GPUs 0: {A100}), memory free"
    assert gpus_line(tmp_path, "MIG-1234") == f"{both}, 1 needed (GPUs ?), memory free"


def test_a_node_of_one_model_reads_as_before(tmp_path, node):
    node([(H100, "9.0")] * 2)
    assert gpus_line(tmp_path, "1") == f"2 x {H100} (compute capability 9.0), 1 needed (GPUs 1), memory free"
