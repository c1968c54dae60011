"""A server on a MIG instance has hardware facts too: its GPU's row named with the instance's
profile, as ``nvidia-smi -L`` lists it, so a worker on a slice and one on whole GPUs are told apart.

QA (qa167): ``server_gpu_facts(("MIG-...",), 1)`` was None: a worker on a 1g.10gb slice of an A100
joined a study whose baseline ran on a whole A100 (and the reverse), each trial judged against the
other hardware's baseline. A stand-in nvidia-smi (a real process) answers the query and ``-L``.
"""

from __future__ import annotations

from support.fake_commands import counting_command

from tuner.engine.facts import describe_hardware, hardware_difference
from tuner.server.gpus import mig_instances, server_gpu_facts

LIST = """GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5d5ba0d6-d33d-2b2c-524d-9e3d8d2b8a77)
  MIG 3g.40gb     Device  0: (UUID: MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f)
  MIG 1g.10gb     Device  1: (UUID: MIG-cba663e8-9bed-5b4c-a8ca-a4f4e4fd0ad1)
GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-0e4b6a15-2a9d-67c4-1c3e-1b5a6f7d9e21)
"""


def smi(tmp_path) -> str:
    script, _ = counting_command(tmp_path, "nvidia-smi", f"""\
        if "--query-gpu=index,name,compute_cap,memory.total" in sys.argv:
            print("0, NVIDIA A100-SXM4-80GB, 8.0, 81920\\n1, NVIDIA A100-SXM4-80GB, 8.0, 81920")
        elif sys.argv[1:] == ["-L"]:
            sys.stdout.write({LIST!r})
        else:
            sys.exit(6)
        """)
    return str(script)


def test_a_mig_instance_is_its_gpu_named_with_its_profile(tmp_path):
    fake = smi(tmp_path)
    assert mig_instances(fake) == {"MIG-c6d4f1ef-42e4-5de3-91c7-45d71c87eb3f": ("0", "3g.40gb"),
                                   "MIG-cba663e8-9bed-5b4c-a8ca-a4f4e4fd0ad1": ("0", "1g.10gb")}
    slice_ = server_gpu_facts(("MIG-cba663e8",), 1, fake)  # a unique prefix, as CUDA takes it
    assert slice_ == {"name": "NVIDIA A100-SXM4-80GB MIG 1g.10gb", "count": 1, "compute_cap": "8.0"}
    whole = server_gpu_facts(("1",), 1, fake)
    assert whole == {"name": "NVIDIA A100-SXM4-80GB", "count": 1, "memory_total_mib": 81920, "compute_cap": "8.0"}
    assert hardware_difference(whole, slice_) == "GPU name" == hardware_difference(slice_, whole)
    assert hardware_difference(slice_, server_gpu_facts(("MIG-c6d4",), 1, fake)) == "GPU name"  # 3g.40gb
    assert describe_hardware(slice_) == "1 x NVIDIA A100-SXM4-80GB MIG 1g.10gb (compute capability 8.0)"


def test_an_instance_nvidia_smi_does_not_place_is_unknown(tmp_path):
    fake = smi(tmp_path)
    assert server_gpu_facts(("MIG-ffff",), 1, fake) is None   # no such instance
    assert server_gpu_facts(("MIG-c",), 1, fake) is None      # a prefix of two
    assert server_gpu_facts(("MIG-c6d4",), 1, str(tmp_path / "absent")) is None
