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


# `nvidia-smi topo -m` of an 8-GPU node, trimmed to 4 GPUs: GPUs 0-1 and 2-3 on NVLink bridges, the
# pairs over PCIe (the header underlined with terminal escapes, as nvidia-smi prints it)
TOPO = ("\t\x1b[4mGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\x1b[0m\n"
        "GPU0\t X \tNV4\tSYS\tSYS\tPXB\t0-31\t0\t\tN/A\n"
        "GPU1\tNV4\t X \tSYS\tSYS\tPXB\t0-31\t0\t\tN/A\n"
        "GPU2\tSYS\tSYS\t X \tNV4\tSYS\t32-63\t1\t\tN/A\n"
        "GPU3\tSYS\tSYS\tNV4\t X \tSYS\t32-63\t1\t\tN/A\n\nLegend:\n\n  X    = Self\n"
        "  NV#  = Connection traversing a bonded set of # NVLinks\n")


def smi_with_topo(tmp_path, topo: str = TOPO) -> str:
    script, _ = counting_command(tmp_path, "nvidia-smi", f"""\
        if "--query-gpu=index,name,compute_cap,memory.total" in sys.argv:
            print("0, NVIDIA H100 NVL, 9.0, 95830\\n1, NVIDIA H100 NVL, 9.0, 95830\\n"
                  "2, NVIDIA H100 NVL, 9.0, 95830\\n3, NVIDIA H100 NVL, 9.0, 95830")
        elif sys.argv[1:] == ["topo", "-m"]:
            sys.stdout.write({topo!r})
        else:
            sys.exit(6)
        """)
    return str(script)


def test_the_interconnect_between_the_server_s_gpus_from_topo(tmp_path):
    fake = smi_with_topo(tmp_path)
    assert server_gpu_facts(("0", "1"), 2, fake)["interconnect"] == "NVLink"
    assert server_gpu_facts(("1", "2"), 2, fake)["interconnect"] == "PCIe"
    assert server_gpu_facts(None, None, fake)["interconnect"] == "NVLink + PCIe"
    assert "interconnect" not in server_gpu_facts(("0",), 1, fake)  # one GPU: nothing between


def test_a_topology_it_cannot_read_leaves_the_interconnect_unknown(tmp_path):
    fake = smi_with_topo(tmp_path, "GPU0\tGPU1\nsomething else\n")
    assert server_gpu_facts(("0", "1"), 2, fake) == {"name": "NVIDIA H100 NVL", "count": 2,
                                                      "memory_total_mib": 95830, "compute_cap": "9.0"}
