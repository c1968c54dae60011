"""A node of GPUs as a fake ``nvidia-smi`` on PATH tells it (the seam: the tuner reads nvidia-smi's
answers, tuner/server/gpus.py): each row ``(index, name, compute capability, uuid)``, every
``--query-gpu`` field answered from it, 81559 MiB each. CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER are
unset for the test, so each test says how CUDA numbers the GPUs."""

from __future__ import annotations

import os

from support.fake_commands import counting_command

A100, H100 = "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"
#: An A100 at PCI GPU 0 and an H100 at 1.
MIXED = [("0", A100, "8.0", "GPU-aaaa"), ("1", H100, "9.0", "GPU-bbbb")]


def gpu_node(tmp_path, monkeypatch, rows=MIXED) -> None:
    counting_command(tmp_path, "nvidia-smi", f"""\
        rows = {rows!r}
        query = next(a for a in sys.argv if a.startswith("--query-gpu="))
        for index, name, cap, uuid in rows:
            values = {{"index": index, "name": name, "compute_cap": cap, "uuid": uuid,
                       "memory.total": "81559", "memory.free": "81000"}}
            print(", ".join(values[f] for f in query.split("=", 1)[1].split(",")))
        """)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    monkeypatch.delenv("CUDA_DEVICE_ORDER", raising=False)
