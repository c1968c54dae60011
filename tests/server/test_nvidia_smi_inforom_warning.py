"""An nvidia-smi that warns of a corrupted infoROM (``WARNING: infoROM is corrupted at gpu ...`` before
its answer, exit status 14, nvidia-smi(1)) still answers: its GPUs are read, not "no nvidia-smi".

QA (qa167): on such a node ``tuner doctor`` said ``gpus: nvidia-smi is not available or failed: run
doctor on the GPU node`` and ``GPUs: unknown`` (an MLA study on H100s pinned triton, not fa3), and
``study run`` waited for no GPU memory and recorded no hardware with the baseline. A stand-in
nvidia-smi (a real process) prints the warning first; another failure is still "unknown".
"""

from __future__ import annotations

import pytest
from support.fake_commands import counting_command

from tuner.server.gpus import (gpu_indices_by_uuid, gpu_inventory, gpu_memory_used_mib, interconnect,
                               server_gpu_facts)

WARNING = "WARNING: infoROM is corrupted at gpu 0000:01:00.0"


def smi(tmp_path, status: int) -> str:
    script, _ = counting_command(tmp_path, "nvidia-smi", f"""\
        print({WARNING!r})
        rows = [("0", "GPU-aaaa", "12000"), ("1", "GPU-bbbb", "3")]
        query = next((a for a in sys.argv if a.startswith("--query-gpu=")), None)
        if query:
            for index, uuid, used in rows:
                values = {{"index": index, "uuid": uuid, "memory.used": used, "name": "NVIDIA H100 80GB HBM3",
                           "compute_cap": "9.0", "memory.total": "81559", "memory.free": "70000"}}
                print(", ".join(values[f] for f in query.split("=", 1)[1].split(",")))
        else:
            print("\\tGPU0\\tGPU1\\tCPU Affinity\\nGPU0\\t X \\tNV18\\t0-31\\nGPU1\\tNV18\\t X \\t0-31")
        sys.exit({status})
        """)
    return str(script)


def test_the_answer_after_the_warning_is_read(tmp_path):
    fake = smi(tmp_path, 14)
    assert gpu_memory_used_mib(fake) == [12000, 3]
    assert gpu_memory_used_mib(fake, ["1", "0"]) == [3, 12000]
    assert gpu_indices_by_uuid(fake) == {"GPU-aaaa": "0", "GPU-bbbb": "1"}
    assert [g["compute_cap"] for g in gpu_inventory(fake)] == ["9.0", "9.0"]
    assert interconnect(["0", "1"], fake) == "NVLink"
    assert server_gpu_facts(("GPU-bbbb",), 1, fake) == {
        "name": "NVIDIA H100 80GB HBM3", "count": 1, "memory_total_mib": 81559, "compute_cap": "9.0"}


@pytest.mark.parametrize("status", [6, 15])  # query unsuccessful; GPU fallen off the bus
def test_another_failure_is_still_unknown(tmp_path, status):
    fake = smi(tmp_path, status)
    assert gpu_memory_used_mib(fake) is None and gpu_inventory(fake) is None


def test_the_warning_alone_is_no_answer(tmp_path):
    script, _ = counting_command(tmp_path, "nvidia-smi", f"""\
        print({WARNING!r})
        sys.exit(14)
        """)
    fake = str(script)
    assert gpu_inventory(fake) is None and gpu_memory_used_mib(fake) is None
    assert gpu_indices_by_uuid(fake) is None and server_gpu_facts(("0",), 1, fake) is None
