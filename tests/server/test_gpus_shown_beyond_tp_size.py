"""An SGLang server shown more GPUs than its TP ranks use (``CUDA_VISIBLE_DEVICES=0,1``, ``tp_size: 1``,
as a scheduler sets it for a whole allocation) waits before its launch, and after its stop, on the GPUs
it runs on only: the first ``tp_size`` it is shown (SGLang 0.5.23 ``entrypoints/engine.py``: ``gpu_id =
base_gpu_id + tp_rank * gpu_id_step``, an index into the visible devices), as it does with the variable
unset (GPUs 0 to tp_size - 1).

QA (qa128): with ``0,1`` and tp_size 1, another user's job on GPU 1 held every launch for
``server.startup_timeout_s``, then stopped the run (``GPUs 0,1 still hold [300, 70000] MiB of another
process's memory ...``), though the server never touches GPU 1. A stand-in nvidia-smi plays the node.
"""

from __future__ import annotations

import sys

import pytest
from support.fake_commands import counting_command
from support.processes import STARTED_GROUPS

from tuner.config.study import ServerSettings
from tuner.config.yamlfile import ConfigError
from tuner.server.launcher import ServerProcess
from tuner.server.orphans import list_records

PY = sys.executable


@pytest.fixture
def node(tmp_path):
    """GPU 0 free (300 MiB), GPU 1 another user's (70,000 MiB); and a server that sleeps."""
    fake, _ = counting_command(tmp_path, "nvidia-smi", """\
        if "--query-gpu=index,memory.used" in sys.argv:
            print("0, 300\\n1, 70000")
        elif "--query-gpu=memory.used" in sys.argv:
            print("300\\n70000")
        else:
            sys.exit(6)
        """)
    wrapper = tmp_path / "python-sleeper"
    wrapper.write_text(f'#!/bin/sh\nexec "{PY}" -c "import time; time.sleep(600)"\n')
    wrapper.chmod(0o755)

    def server(visible: str, tp: int, **args) -> ServerProcess:
        settings = ServerSettings.model_validate({
            "backend": "sglang", "python": str(wrapper), "model_path": "org/model", "tp_size": tp,
            "startup_timeout_s": 1, "stop_grace_s": 5, "args": args, "env": {"CUDA_VISIBLE_DEVICES": visible}})
        srv = ServerProcess(settings, None, workdir=tmp_path / "w", port=0)
        srv.nvidia_smi = str(fake)
        return srv

    return server


def test_the_gpus_past_tp_size_are_not_waited_for(node, tmp_path):
    srv = node("0,1", 1)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        (rec,) = list_records(tmp_path / "w")
        assert rec.gpu_indices == ["0"] and rec.gpu_memory_before_mib == [300]
    finally:
        srv.stop()


@pytest.mark.parametrize("visible, tp, args, named", [
    ("1,0", 1, {}, "GPUs 1 still hold [70000] MiB"),  # CUDA's order: the first shown is GPU 1
    ("0,1", 2, {}, "GPUs 0,1 still hold [300, 70000] MiB"),  # both ranks' GPUs
    ("0,1", 1, {"base_gpu_id": 1}, "GPUs 0,1 still hold [300, 70000] MiB"),  # moved: every GPU shown
])
def test_the_gpus_the_ranks_run_on_are_waited_for(node, visible, tp, args, named):
    srv = node(visible, tp, **args)
    try:
        with pytest.raises(ConfigError) as err:
            srv.start()
    finally:
        srv.stop()
    assert named in str(err.value) and srv.proc is None
