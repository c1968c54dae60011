"""The GPU lock of an SGLang server (tuner/server/launcher.py with tuner/server/gpu_lock.py) around
launches that fail or are repeated: a start that launches nothing (its fixed port taken, its
interpreter missing) gives the GPUs back at once; a server launched again on another port because
its port was taken keeps them from its first launch to its last stop, so no other tuner takes them
in between."""

from __future__ import annotations

import socket
import sys

import pytest
from support.processes import STARTED_GROUPS
from support.squatted_ports import binder_python, squat_every_picked_port

from tuner.config.study import ServerSettings
from tuner.config.yamlfile import ConfigError
from tuner.server.gpu_lock import GpuLock
from tuner.server.launcher import PORT_RELAUNCHES, PortInUseError, ServerProcess
from tuner.server.ports import pick_free_port


def sglang(python: str) -> ServerSettings:
    return ServerSettings.model_validate({
        "backend": "sglang", "python": python, "model_path": "org/model", "tp_size": 1, "host": "127.0.0.1",
        "startup_timeout_s": 60, "stop_grace_s": 5, "env": {"CUDA_VISIBLE_DEVICES": "0,1"}})


def test_a_start_that_launches_nothing_gives_the_gpus_back(tmp_path):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    try:
        srv = ServerProcess(sglang(sys.executable), None, workdir=tmp_path, port=taken.getsockname()[1])
        with pytest.raises(PortInUseError):
            srv.start()
        assert srv.proc is None and srv.gpu_lock is not None and not srv.gpu_lock.held
    finally:
        taken.close()
    srv = ServerProcess(sglang(str(tmp_path / "no-such-python")), None, workdir=tmp_path,
                        port=pick_free_port("127.0.0.1"))
    with pytest.raises(ConfigError):
        srv.start()
    # an interpreter that cannot run is found before the GPUs are taken (tuner.server.interpreter)
    assert srv.proc is None and (srv.gpu_lock is None or not srv.gpu_lock.held)


def test_a_server_launched_again_on_another_port_keeps_its_gpus_throughout(tmp_path, monkeypatch):
    taken, released = [], []
    acquire, release = GpuLock.acquire, GpuLock.release
    monkeypatch.setattr(GpuLock, "acquire", lambda self: taken.append(1) or acquire(self))
    monkeypatch.setattr(GpuLock, "release", lambda self: released.append(1) or release(self))
    squats = squat_every_picked_port(monkeypatch)
    srv = ServerProcess(sglang(str(binder_python(tmp_path))), None, workdir=tmp_path, port=0)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        with pytest.raises(PortInUseError):
            srv.wait_ready()
        launches = [ln for ln in srv.log_path.read_text().splitlines() if " launch: " in ln]
        assert len(launches) == PORT_RELAUNCHES + 1  # the fault was inflicted at every launch
        # taken once before the first launch, given back once after the last stop
        assert (len(taken), len(released)) == (1, 1) and not srv.gpu_lock.held
    finally:
        srv.stop()
        for s in squats:
            s.close()
