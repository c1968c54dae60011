"""An SGLang server on a MIG instance (``CUDA_VISIBLE_DEVICES=MIG-...``) is launched without waiting for
free GPU memory: the GPU's other instances are other jobs', and nvidia-smi's ``memory.used`` is the
whole GPU's, so no level of it says the instance is free.

QA (qa128): with the node's other MIG instances holding memory, every launch waited out
``server.startup_timeout_s`` and stopped the run (``GPUs all still hold [70000, 300] MiB of another
process's memory ...``), on a node where the server's own instance was free. A stand-in nvidia-smi
plays the node; the server is a real process.
"""

from __future__ import annotations

import logging
import sys

from support.fake_commands import counting_command
from support.processes import STARTED_GROUPS

from tuner.config.study import ServerSettings
from tuner.server.launcher import ServerProcess
from tuner.server.orphans import list_records

PY = sys.executable


def test_a_mig_instance_is_launched_on_without_waiting(tmp_path, caplog):
    fake, _ = counting_command(tmp_path, "nvidia-smi", """\
        if "--query-gpu=memory.used" in sys.argv:
            print("70000\\n300")  # GPU 0's other MIG instances are in use
        else:
            sys.exit(6)
        """)
    wrapper = tmp_path / "python-sleeper"
    wrapper.write_text(f'#!/bin/sh\nexec "{PY}" -c "import time; time.sleep(600)"\n')
    wrapper.chmod(0o755)
    settings = ServerSettings.model_validate({
        "backend": "sglang", "python": str(wrapper), "model_path": "org/model", "tp_size": 1,
        "startup_timeout_s": 1, "stop_grace_s": 5,
        "env": {"CUDA_VISIBLE_DEVICES": "MIG-4f1e2d3c-aaaa-bbbb-cccc-dddddddddddd"}})
    srv = ServerProcess(settings, None, workdir=tmp_path / "w", port=0)
    srv.nvidia_smi = str(fake)
    try:
        with caplog.at_level(logging.INFO, logger="tuner.server"):
            srv.start()
        STARTED_GROUPS.add(srv.pgid)
        assert srv.proc is not None and srv.gpu_wait_s == 0
        (rec,) = list_records(tmp_path / "w")
        assert rec.gpu_memory_before_mib == [70000, 300]  # what the stop waits back to
        assert "a MIG instance in CUDA_VISIBLE_DEVICES; not waiting for free memory" in caplog.text
    finally:
        srv.stop()
    assert srv.returncode is not None
