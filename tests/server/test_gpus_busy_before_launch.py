"""An SGLang server is launched only onto GPUs that hold no other process's memory (at most 1 GiB
each, nvidia-smi's ``memory.used`` of its ``CUDA_VISIBLE_DEVICES``): the GPU lock keeps other tuners
off them, but not the previous server's teardown still under way past its stop's wait (SGLang notes
over 30 s on GB300) nor another user's job. Launched beside it, SGLang ran out of memory (``oom``,
charged to the setting) or ran with less memory and compute than the baseline had. The launcher
waits for them (interruptibly, up to ``server.startup_timeout_s``, not counted in the trial's
time), then refuses with one line naming the GPUs, nothing launched. A stand-in nvidia-smi plays
the node."""

from __future__ import annotations

import sys

import pytest
from support.fake_commands import counting_command
from support.processes import STARTED_GROUPS

from tuner.config.yamlfile import ConfigError
from tuner.server.launcher import ServerProcess
from tuner.server.orphans import list_records
from tuner.server.ports import pick_free_port

PY = sys.executable


def nvidia_smi(tmp_path, busy_calls: int):
    """GPU 0 uses 70,000 MiB (the last server's leftovers) for its first ``busy_calls`` calls, then
    300; GPU 1 (not the server's) 70,000 throughout."""
    return counting_command(tmp_path, "nvidia-smi", f"""\
        gpu0 = "70000" if n < {busy_calls} else "300"
        if "--query-gpu=index,memory.used" in sys.argv:
            print("0, " + gpu0 + "\\n1, 70000")
        elif "--query-gpu=memory.used" in sys.argv:
            print(gpu0 + "\\n70000")
        else:
            sys.exit(6)
        """)


def sleeper(tmp_path, fake, startup_timeout_s: float = 60) -> ServerProcess:
    srv = ServerProcess.from_argv([PY, "-c", "import time; time.sleep(600)"], host="127.0.0.1",
                                  port=pick_free_port("127.0.0.1"), log_path=tmp_path / "server.log",
                                  workdir=tmp_path, env={"CUDA_VISIBLE_DEVICES": "0"}, backend="sglang",
                                  startup_timeout_s=startup_timeout_s, stop_grace_s=5)
    srv.nvidia_smi = str(fake)
    return srv


def test_the_launch_waits_until_its_gpus_are_free(tmp_path, caplog):
    fake, counter = nvidia_smi(tmp_path, busy_calls=2)
    srv = sleeper(tmp_path, fake)
    try:
        with caplog.at_level("WARNING", logger="tuner.server"):
            srv.start()
        STARTED_GROUPS.add(srv.pgid)
        (rec,) = list_records(tmp_path)
        # launched once GPU 0 was free; what it used then is what the stop waits back to
        assert rec.gpu_memory_before_mib == [300], rec.gpu_memory_before_mib
        assert int(counter.read_text()) == 3
        assert "waiting for GPUs 0 to be free before the launch: [70000] MiB" in caplog.text
        assert srv.gpu_wait_s > 0  # kept out of the trial's duration and deadline
    finally:
        srv.stop()


def test_gpus_still_busy_at_the_deadline_launch_nothing(tmp_path):
    fake, _ = nvidia_smi(tmp_path, busy_calls=10_000)
    srv = sleeper(tmp_path, fake, startup_timeout_s=1)
    try:
        with pytest.raises(ConfigError) as err:
            srv.start()
    finally:
        srv.stop()  # nothing to stop, unless it was launched
    assert "server.env.CUDA_VISIBLE_DEVICES" in str(err.value) and "GPUs 0 still hold [70000] MiB" in str(err.value)
    assert srv.proc is None and not list_records(tmp_path)
    assert srv.gpu_lock is not None and not srv.gpu_lock.held  # given back at once


def test_with_cuda_visible_devices_unset_the_gpus_are_the_tp_ranks(tmp_path, monkeypatch):
    """SGLang runs tp_size ranks on GPUs 0 up (base_gpu_id 0, gpu_id_step 1): another user's job on
    GPU 1 of the node is no reason to wait for a tp_size 1 server; one that sets base_gpu_id is
    watched on every GPU."""
    from tuner.config.study import ServerSettings

    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    fake, _ = nvidia_smi(tmp_path, busy_calls=0)  # GPU 0: 300 MiB; GPU 1: 70,000, someone else's
    wrapper = tmp_path / "python-sleeper"
    wrapper.write_text(f'#!/bin/sh\nexec "{PY}" -c "import time; time.sleep(600)"\n')
    wrapper.chmod(0o755)

    def server(**args) -> ServerProcess:
        settings = ServerSettings.model_validate({
            "backend": "sglang", "python": str(wrapper), "model_path": "org/model", "tp_size": 1,
            "startup_timeout_s": 1, "stop_grace_s": 5, "args": args})
        srv = ServerProcess(settings, None, workdir=tmp_path, port=0)
        srv.nvidia_smi = str(fake)
        return srv

    srv = server()
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        (rec,) = list_records(tmp_path)
        assert rec.gpu_indices == ["0"] and rec.gpu_memory_before_mib == [300]
    finally:
        srv.stop()
    moved = server(base_gpu_id=1)
    assert moved._unset_gpus is None  # every GPU: nvidia-smi's `memory.used` of them all
