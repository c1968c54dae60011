"""``tuner doctor``'s GPU check judges the GPUs the server gets: its ``CUDA_VISIBLE_DEVICES`` as CUDA
reads it, not the first ``tp_size`` rows nvidia-smi prints (nvidia-smi lists every GPU of the node,
whatever CUDA_VISIBLE_DEVICES says).

QA (qa128): on a node of 8 GPUs whose 0-3 run another study, ``CUDA_VISIBLE_DEVICES=4,5,6,7 tuner doctor``
(the split the README recommends, tp_size 4) warned ``GPU 0: 80559 MiB in use; ... GPU 3 ...`` about
the other study's GPUs, and said nothing of its own; ``CUDA_VISIBLE_DEVICES=0,1`` with tp_size 4, or
``-1``, or an empty value, passed the count (8 GPUs listed), and every launch of the night would fail.
A stand-in ``nvidia-smi`` first on PATH answers the two queries the check makes (the one fake: this
machine has no GPU).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.engine import doctor
from tuner.engine.doctor import FAIL, PASS, WARN

#: GPUs 0-3 nearly full (another study's server), 4-7 free; UUIDs GPU-0000000<i>-...
NVIDIA_SMI = """#!{python}
import sys
query = next(a for a in sys.argv if a.startswith("--query-gpu="))
for i in range(8):
    if "index,uuid" in query:
        print(f"{{i}}, GPU-0000000{{i}}-aaaa-bbbb-cccc-dddddddddddd")
    elif "name,compute_cap,memory.total,memory.free" in query:
        print(f"NVIDIA H100 80GB HBM3, 9.0, 81559, {{1000 if i < 4 else 81000}}")
    else:
        sys.exit(6)
"""


@pytest.fixture
def node(tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    exe = bin_dir / "nvidia-smi"
    exe.write_text(NVIDIA_SMI.format(python=sys.executable))
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    return tmp_path


def _check(tmp_path: Path, tp: int, shell: str | None = None, env: dict | None = None, monkeypatch=None):
    if shell is not None:
        monkeypatch.setenv("CUDA_VISIBLE_DEVICES", shell)
    path = demo_study(tmp_path, **{"server.backend": "sglang", "server.tp_size": tp, "server.env": env or {}})
    return doctor.check_gpus(load_study(path))


def test_the_server_s_own_gpus_are_judged_not_the_first_rows(node, monkeypatch):
    c = _check(node, 4, "4,5,6,7", monkeypatch=monkeypatch)
    assert c.status == PASS and "GPUs 4,5,6,7" in c.message, c.line()
    c = _check(node, 4, "3,4,5,6", monkeypatch=monkeypatch)
    assert c.status == WARN and "GPU 3:" in c.message and "GPU 0" not in c.message, c.line()
    # by UUID (a unique prefix, as CUDA takes), as the GPU lock reads them
    c = _check(node, 2, env={"CUDA_VISIBLE_DEVICES": "GPU-00000006,GPU-00000007-aaaa"})
    assert c.status == PASS and "GPUs 6,7" in c.message, c.line()
    # unset: every GPU of the node, SGLang's TP ranks on 0 up (busy here)
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES")
    c = _check(node, 4)
    assert c.status == WARN and "GPU 0:" in c.message and "GPU 4" not in c.message, c.line()


@pytest.mark.parametrize("visible, seen", [("0,1", 2), ("", 0), ("-1", 0), ("4,5,-1,6", 2), ("4,9,5,6", 1),
                                           ("4,4,5,6", 1), ("GPU-0000000f,4,5,6", 0)])
def test_fewer_visible_gpus_than_tp_size_fail_naming_the_variable(node, monkeypatch, visible, seen):
    # CUDA's rule: the devices before the first invalid entry (an unlisted index, -1, a GPU twice)
    c = _check(node, 4, env={"CUDA_VISIBLE_DEVICES": visible})
    assert c.status == FAIL, c.line()
    assert c.message.startswith(f"{seen} GPU(s) visible to the server, of the node's 8 (CUDA_VISIBLE_DEVICES="
                                f"{visible!r}, server.env's"), c.line()
    assert "give server.env.CUDA_VISIBLE_DEVICES 4 GPUs" in c.message
    assert "\n" not in c.line()


def test_the_shell_s_variable_is_named_as_the_shell_s(node, monkeypatch):
    c = _check(node, 4, "0,1", monkeypatch=monkeypatch)
    assert c.status == FAIL and "CUDA_VISIBLE_DEVICES='0,1', this shell's" in c.message, c.line()
    # server.env's wins over the shell's, as on the launch
    c = _check(node, 2, "0,1", env={"CUDA_VISIBLE_DEVICES": "6,7"}, monkeypatch=monkeypatch)
    assert c.status == PASS and "GPUs 6,7" in c.message, c.line()


def test_a_mig_instance_counts_as_a_gpu_whose_memory_is_not_told(node, monkeypatch):
    c = _check(node, 2, env={"CUDA_VISIBLE_DEVICES": "MIG-4f1e2d3c,7"})
    assert c.status == PASS and "GPUs ?,7" in c.message, c.line()
