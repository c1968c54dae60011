"""A server whose port (picked by the tuner, ``server.port: 0``) is taken every time it starts is
launched again at most :data:`tuner.server.launcher.PORT_RELAUNCHES` times, then the start fails with
:class:`PortInUseError`, and nothing is left running."""

from __future__ import annotations

import re

import pytest
from support.processes import STARTED_GROUPS
from support.squatted_ports import binder_python, squat_every_picked_port

from tuner.config.study import ServerSettings
from tuner.server.launcher import PORT_RELAUNCHES, PortInUseError, ServerProcess


def test_a_port_taken_at_every_launch_is_given_up_after_port_relaunches(tmp_path, monkeypatch):
    server = ServerSettings.model_validate({
        "backend": "sim", "python": str(binder_python(tmp_path)), "model_path": "org/model",
        "draft_model_path": "org/draft",
        "tp_size": 8, "startup_timeout_s": 60, "stop_grace_s": 5, "sim": {"speedup": 5000.0}})
    squats = squat_every_picked_port(monkeypatch)
    srv = ServerProcess(server, None, workdir=tmp_path, port=0)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        with pytest.raises(PortInUseError) as err:
            srv.wait_ready()
        assert f"port {srv.port} on 127.0.0.1" in str(err.value) and "address already in use" in str(err.value)
        launches = [ln for ln in srv.log_path.read_text().splitlines() if ln.startswith("# tuner:")
                    and " launch: " in ln]
        # the first launch and PORT_RELAUNCHES more, each on a port picked anew
        assert len(launches) == PORT_RELAUNCHES + 1, launches
        ports = [re.search(r" --port (\d+)", ln).group(1) for ln in launches]
        assert len(set(ports)) == len(ports), ports
        assert srv.returncode is not None
        assert not list((tmp_path / "servers").glob("*.json"))
    finally:
        srv.stop()
        for s in squats:
            s.close()
