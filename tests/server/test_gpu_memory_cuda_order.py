"""The GPU memory an SGLang launch waits on, on a node mixing GPU models under CUDA's device order.

CUDA numbers the GPUs fastest first unless ``CUDA_DEVICE_ORDER=PCI_BUS_ID`` (CUDA C Programming
Guide, "CUDA Environment Variables"): on an A100 (nvidia-smi's 0) + H100 (1) node, a server shown
``CUDA_VISIBLE_DEVICES=0`` runs on the H100. QA (qa187): the launcher read it as nvidia-smi's GPU 0,
so another user's job on the A100 held the launch for ``startup_timeout_s`` and then stopped the run
(the server's GPU was free), and the stop waited on the A100 while the H100 still held the server's
memory (the next launch runs out of memory: charged to the setting). The seam: a stand-in
nvidia-smi plays the node; the server is a real process."""

from __future__ import annotations

import sys

from support.fake_commands import counting_command
from support.processes import STARTED_GROUPS

from tuner.server.launcher import ServerProcess
from tuner.server.orphans import list_records
from tuner.server.ports import pick_free_port

PY = sys.executable


def mixed_node(tmp_path):
    """GPU 0 an A100 using 70,000 MiB (another user's job) throughout; GPU 1 an H100 whose use is
    read from the file ``h100``: its first number, dropped at each read while more follow."""
    h100 = tmp_path / "h100"
    h100.write_text("300")
    fake, _ = counting_command(tmp_path, "nvidia-smi", f"""\
        rows = [("0", "NVIDIA A100-SXM4-80GB", "8.0", "GPU-aaaa"), ("1", "NVIDIA H100 80GB HBM3", "9.0", "GPU-bbbb")]
        query = next((a for a in sys.argv if a.startswith("--query-gpu=")), None)
        if query is None:
            sys.exit(6)
        fields = query.split("=", 1)[1].split(",")
        h100 = pathlib.Path({str(h100)!r})
        queue = h100.read_text().split()
        if "memory.used" in fields and len(queue) > 1:
            h100.write_text(" ".join(queue[1:]))
        for index, name, cap, uuid in rows:
            values = {{"index": index, "name": name, "compute_cap": cap, "uuid": uuid, "memory.total": "81559",
                       "memory.used": "70000" if index == "0" else queue[0]}}
            print(", ".join(values[f] for f in fields))
        """)
    return fake, h100


def test_an_index_under_cuda_s_default_order_is_not_read_as_nvidia_smi_s_gpu(tmp_path, monkeypatch):
    monkeypatch.delenv("CUDA_DEVICE_ORDER", raising=False)  # CUDA's default: fastest first
    fake, h100 = mixed_node(tmp_path)
    srv = ServerProcess.from_argv([PY, "-c", "import time; time.sleep(600)"], host="127.0.0.1",
                                  port=pick_free_port("127.0.0.1"), log_path=tmp_path / "server.log",
                                  workdir=tmp_path, env={"CUDA_VISIBLE_DEVICES": "0"}, backend="sglang",
                                  startup_timeout_s=3, stop_grace_s=5)
    srv.nvidia_smi = str(fake)
    try:
        srv.start()  # not held by the A100's job (before: 3 s of waiting, then ConfigError)
        STARTED_GROUPS.add(srv.pgid)
        (rec,) = list_records(tmp_path)
        assert rec.gpu_memory_before_mib == [70000, 300]  # every GPU's use: which is the server's is unknown
        h100.write_text("60000 60000 300")  # the server's memory, still held as it stops
    finally:
        srv.stop()
    assert h100.read_text() == "300"  # the stop waited until the H100 let it go
