"""A helper command (``nvidia-smi``, the server interpreter's import check) whose output is not text in
the locale's encoding reads as text with U+FFFD where the bytes were, never as a traceback.

QA (qa128): an ``nvidia-smi`` answering in a Latin-1 locale (``Fehler: Zugriff verweigert \\xfcber NVML``,
exit 9) made ``tuner doctor`` (and ``study create`` / ``study run``, which read the GPUs the same way)
end in ``UnicodeDecodeError: 'utf-8' codec can't decode byte 0xfc``. Stand-in commands first on PATH
write the bytes, real processes.
"""

from __future__ import annotations

import logging
import os
import sys

from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.engine import doctor
from tuner.server import gpus

LATIN1 = b"Fehler: Zugriff verweigert \xfcber NVML"


def _command(folder, name: str, body: str):
    exe = folder / name
    exe.write_text(f"#!{sys.executable}\nimport sys\n{body}\n")
    exe.chmod(0o755)
    return exe


def test_nvidia_smi_failing_in_latin1_reads_as_unknown(tmp_path, monkeypatch, caplog):
    _command(tmp_path, "nvidia-smi", f"sys.stderr.buffer.write({LATIN1!r} + b'\\n'); sys.exit(9)")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    with caplog.at_level(logging.WARNING, logger="tuner.server"):
        assert gpus.gpu_memory_used_mib(only=["0"]) is None
    assert "nvidia-smi exited 9: Fehler: Zugriff verweigert \ufffdber NVML" in caplog.text
    assert gpus.gpu_inventory() is None and gpus.gpu_indices_by_uuid() is None
    config = load_study(demo_study(tmp_path, **{"server.backend": "sglang"}))
    check = doctor.check_gpus(config)
    assert check.status == doctor.FAIL and "nvidia-smi is not available or failed" in check.message


def test_a_gpu_name_not_in_utf8_is_read(tmp_path, monkeypatch):
    _command(tmp_path, "nvidia-smi", "sys.stdout.buffer.write(b'NVIDIA H100 \\xe9dition, 9.0, 81559, 81000\\n')")
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    (gpu,) = gpus.gpu_inventory()
    assert gpu["name"] == "NVIDIA H100 \ufffddition" and gpu["compute_cap"] == "9.0"


def test_an_interpreter_failing_in_latin1_is_one_failing_line(tmp_path):
    python = _command(tmp_path, "python-latin1", f"sys.stderr.buffer.write({LATIN1!r} + b'\\n'); sys.exit(1)")
    config = load_study(demo_study(tmp_path, **{"server.backend": "sglang", "server.python": str(python)}))
    check = doctor.check_interpreter(config)
    assert check.status == doctor.FAIL, check.line()
    assert "cannot import sglang (Fehler: Zugriff verweigert \ufffdber NVML)" in check.message
