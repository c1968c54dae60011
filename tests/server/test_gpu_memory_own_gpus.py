"""An SGLang server's stop waits for the memory of its own GPUs (its ``CUDA_VISIBLE_DEVICES``), not
the node's every GPU: nvidia-smi lists them all, and on a node shared by two tuner workers (GPUs 0-3
and 4-7, which the GPU lock lets run side by side) the other worker's server loading meanwhile made
every stop wait out its 30 s and warn "GPU memory not released" (QA: qa82). A stand-in nvidia-smi
plays the node: GPU 1, another worker's, fills up after the launch."""

from __future__ import annotations

import sys

from support.fake_commands import counting_command
from support.processes import STARTED_GROUPS

from tuner.server.launcher import ServerProcess
from tuner.server.orphans import list_records
from tuner.server.ports import pick_free_port

PY = sys.executable


def fake_nvidia_smi(tmp_path, own_used: str = "500"):
    """nvidia-smi of a 2-GPU node: GPU 0 uses ``own_used`` MiB; GPU 1 uses 500 MiB at the first
    call and 70,000 from the second on (another worker's server loaded). Counts its calls."""
    return counting_command(tmp_path, "nvidia-smi", f"""\
        other = "500" if n == 0 else "70000"
        query = next(a for a in sys.argv if a.startswith("--query-gpu="))
        if query == "--query-gpu=index,uuid":
            print("0, GPU-aaaa-0000\\n1, GPU-bbbb-1111")
        elif query == "--query-gpu=index,memory.used":
            print("0, {own_used}\\n1, " + other)
        elif query == "--query-gpu=memory.used":
            print("{own_used}\\n" + other)
        else:
            sys.exit(6)
        """)


def test_a_stop_does_not_wait_for_another_workers_gpus(tmp_path, caplog):
    fake, counter = fake_nvidia_smi(tmp_path)
    srv = ServerProcess.from_argv([PY, "-c", "import time; time.sleep(600)"], host="127.0.0.1",
                                  port=pick_free_port("127.0.0.1"), log_path=tmp_path / "server.log",
                                  workdir=tmp_path, env={"CUDA_VISIBLE_DEVICES": "0"}, backend="sglang",
                                  stop_grace_s=5)
    srv.nvidia_smi = str(fake)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        (rec,) = list_records(tmp_path)
    finally:
        with caplog.at_level("INFO", logger="tuner.server"):
            srv.stop()
    assert "GPU memory not released" not in caplog.text
    # one look at the node's GPU models (CUDA's device order: tuner.server.gpus.indices_unplaced), one
    # at the memory before the launch, one after the stop: GPU 0 was back at once
    assert int(counter.read_text()) == 3
    assert not list_records(tmp_path)
    # the record names them, for a later run's orphan cleanup (tuner.server.orphans)
    assert rec.gpu_indices == ["0"] and rec.gpu_memory_before_mib == [500]


def test_only_the_servers_gpus_are_read_and_waited_for(tmp_path):
    from tuner.server.gpus import gpu_memory_used_mib, server_gpu_indices, wait_gpu_memory_released

    fake, _ = fake_nvidia_smi(tmp_path, own_used="40000")
    smi = str(fake)
    assert server_gpu_indices(("0",), smi) == ["0"]
    assert server_gpu_indices(("GPU-bbbb",), smi) == ["1"]  # a UUID prefix, as CUDA takes it
    assert server_gpu_indices(None, smi) is None  # unset: every GPU
    assert server_gpu_indices(("MIG-1234",), smi) is None  # cannot be told: every GPU
    assert gpu_memory_used_mib(smi, ["1", "0"]) == [70000, 40000]
    assert gpu_memory_used_mib(smi, ["7"]) is None  # a GPU nvidia-smi does not list
    # the server's own GPU still holds its memory: that is still waited for, and given up on
    assert wait_gpu_memory_released([500], 0.2, nvidia_smi=smi, only=["0"]) is False
    assert wait_gpu_memory_released([70000], 0.2, nvidia_smi=smi, only=["1"]) is True
