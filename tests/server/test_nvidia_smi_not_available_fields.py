"""nvidia-smi answering ``[N/A]`` (or ``[Not Supported]``) for a GPU's compute capability reads as
"unknown" (:func:`tuner.server.gpus.gpu_inventory` None), as any other answer it cannot read: the GPU
generation is then the study's ``server.facts.gpu_compute_capability``, or unknown and said so.

QA (qa128): with such an nvidia-smi first on PATH, ``tuner doctor``, ``study create`` and ``study run``
of an SGLang study ended in ``ValueError: '[N/A]' is not a compute capability`` (a traceback). A
stand-in nvidia-smi (a real process) prints the fields.
"""

from __future__ import annotations

import os
import sys

import pytest
from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.engine.doctor import FAIL, run_checks
from tuner.engine.facts import gather_facts
from tuner.server.gpus import gpu_inventory


@pytest.fixture(params=["[N/A]", "[Not Supported]"])
def odd_smi(request, tmp_path, monkeypatch):
    exe = tmp_path / "nvidia-smi"
    exe.write_text(f"#!{sys.executable}\nfor i in range(2):\n"
                   f"    print('NVIDIA H100 80GB HBM3, {request.param}, 81559, 81000')\n")
    exe.chmod(0o755)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    return tmp_path


def test_an_unreadable_compute_capability_is_unknown(odd_smi):
    assert gpu_inventory() is None
    config = load_study(demo_study(odd_smi, **{"server.backend": "sglang"}))
    assert gather_facts(config.server).gpu is None
    stated = load_study(demo_study(odd_smi, name="stated", **{
        "server.backend": "sglang", "server.facts": {"gpu_compute_capability": "9.0"}}))
    assert str(gather_facts(stated.server).gpu) == "9.0"


def test_doctor_says_it_in_its_lines(odd_smi):
    checks = {c.name: c for c in run_checks(load_study(demo_study(odd_smi, **{"server.backend": "sglang"})))}
    assert checks["gpus"].status == FAIL and "nvidia-smi is not available or failed" in checks["gpus"].message
    assert "GPU generation unknown" in checks["model and GPU"].message
