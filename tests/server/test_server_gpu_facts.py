"""What nvidia-smi says of a server's own GPUs (QA, qa155): the facts a study's baseline records and
every worker compares (tuner.engine.baseline), read from a stand-in nvidia-smi."""

from __future__ import annotations

import pytest
from support.fake_commands import counting_command

from tuner.server.gpus import server_gpu_facts

LISTED = ("0, NVIDIA A100-SXM4-80GB, 8.0, 81920\\n1, NVIDIA A100-SXM4-80GB, 8.0, 81920\\n"
          "2, NVIDIA H100 80GB HBM3, 9.0, 81559\\n3, NVIDIA H100 80GB HBM3, 9.0, 81559")


def smi(tmp_path, listed: str = LISTED) -> str:
    script, _ = counting_command(tmp_path, "nvidia-smi", f"""\
        if "--query-gpu=index,name,compute_cap,memory.total" in sys.argv:
            print("{listed}")
        elif "--query-gpu=index,uuid" in sys.argv:
            print("0, GPU-aaaa\\n1, GPU-bbbb\\n2, GPU-cccc\\n3, GPU-dddd")
        else:
            sys.exit(6)
        """)
    return str(script)


def test_the_first_tp_size_of_its_visible_gpus_by_index_or_uuid(tmp_path):
    fake = smi(tmp_path)
    h100 = {"name": "NVIDIA H100 80GB HBM3", "count": 2, "memory_total_mib": 81559, "compute_cap": "9.0"}
    assert server_gpu_facts(("2", "3", "0"), 2, fake) == h100
    assert server_gpu_facts(("GPU-cc", "GPU-dddd"), 2, fake) == h100
    assert server_gpu_facts(None, 2, fake)["name"] == "NVIDIA A100-SXM4-80GB"  # unset: GPUs 0 and 1
    # its ranks moved (dp_size, base_gpu_id, ...): every GPU it is shown, mixed ones named both
    assert server_gpu_facts(("1", "2"), None, fake) == {
        "name": "NVIDIA A100-SXM4-80GB + NVIDIA H100 80GB HBM3", "count": 2, "memory_total_mib": 81559,
        "compute_cap": "8.0 + 9.0"}
    assert server_gpu_facts(None, None, fake)["count"] == 4


@pytest.mark.parametrize("visible, listed", [
    (("MIG-1234",), LISTED),                      # a share of a GPU: not what these fields say
    (("7",), LISTED),                             # a GPU nvidia-smi does not list
    (("0",), "0, NVIDIA H100 80GB HBM3, [N/A], 81559"),
    (("0",), "0, NVIDIA H100 80GB HBM3, 9.0, [Not Supported]"),
    (("0",), "garbage")])
def test_what_cannot_be_told_is_unknown_never_an_error(tmp_path, visible, listed):
    assert server_gpu_facts(visible, 1, smi(tmp_path, listed)) is None


def test_a_name_with_a_comma_stays_whole_and_no_nvidia_smi_is_unknown(tmp_path):
    fake = smi(tmp_path, "0, NVIDIA Graphics Device, rev 2, 9.0, 97871")
    assert server_gpu_facts(("0",), 1, fake)["name"] == "NVIDIA Graphics Device, rev 2"
    assert server_gpu_facts(("0",), 1, str(tmp_path / "absent")) is None
