"""Another process takes the server's port after the tuner's check and answers on it while the server
still loads (another tuner worker's or user's SGLang launched on the same --port, loaded sooner): its
200 is not our server's. The launcher saw that the listener was not its server's and failed the
launch as ``other``, charged to the setting, while its own server was merely loading. Now it is the
port's fault, as when the port is taken before the server binds: a port the tuner picked is picked
again and the server launched again; a fixed port stops the run (``PortInUseError``), nothing left
running. The stranger here is an HTTP server in the test process; the server a stand-in that loads
forever at its first launch and serves at once at the next."""

from __future__ import annotations

import sys

import pytest
from support.healthy_http import HEALTHY_SERVER_PY, Answers200, serving
from support.processes import STARTED_GROUPS

from tuner.config.study import ServerSettings
from tuner.server.launcher import LaunchError, PortInUseError, ServerProcess
from tuner.server.orphans import list_records
from tuner.server.ports import pick_free_port

PY = sys.executable

STANDIN = """
import os, pathlib, sys, time
from http.server import BaseHTTPRequestHandler, HTTPServer
a = sys.argv[1:]
port = int(a[a.index("--port") + 1])
count = pathlib.Path(os.environ["LAUNCHES"])
n = int(count.read_text()) if count.exists() else 0
count.write_text(str(n + 1))
if n == 0:
    time.sleep(600)  # the model load, still under way
""" + HEALTHY_SERVER_PY


def stranger_on(port: int):
    """Another process's server answering 200 on ``port`` (support.healthy_http)."""
    return serving(Answers200, port)


def standin(tmp_path, port: int) -> ServerProcess:
    script = tmp_path / "loader.py"
    script.write_text(STANDIN)
    wrapper = tmp_path / "python-loader"
    wrapper.write_text(f'#!/bin/sh\nexec "{PY}" "{script}" "$@"\n')
    wrapper.chmod(0o755)
    server = ServerSettings.model_validate({
        "backend": "sim", "python": str(wrapper), "model_path": "org/model", "draft_model_path": "org/draft",
        "tp_size": 8, "startup_timeout_s": 60, "stop_grace_s": 5, "sim": {"speedup": 5000.0},
        "env": {"LAUNCHES": str(tmp_path / "launches")}})
    return ServerProcess(server, None, workdir=tmp_path, port=port)


def test_a_stranger_answering_on_a_picked_port_while_the_server_loads_costs_a_relaunch(tmp_path, caplog):
    srv = standin(tmp_path, port=0)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        first = srv.port
        with stranger_on(first):
            try:
                url = srv.wait_ready()
            except LaunchError as exc:
                raise AssertionError(f"charged to the setting: {exc.failure_class}: {exc.message}") from None
            assert srv.port != first and url == f"http://127.0.0.1:{srv.port}"
            assert (tmp_path / "launches").read_text() == "2"
            # the warning says what happened (QA qa110: "address already in use", which no log said)
            said = [r.getMessage() for r in caplog.records if "launching it again" in r.getMessage()]
            assert len(said) == 1 and f"port {first} was taken" in said[0], said
            assert "another process answers on it" in said[0] and "already in use" not in said[0], said
    finally:
        srv.stop()
    assert not list_records(tmp_path)


def test_a_stranger_answering_on_a_fixed_port_stops_the_run(tmp_path):
    port = pick_free_port("127.0.0.1")
    srv = standin(tmp_path, port=port)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        with stranger_on(port):
            with pytest.raises(PortInUseError) as err:
                srv.wait_ready()
            assert f"port {port} on 127.0.0.1 is in use" in str(err.value)
            assert "another process answers on it" in str(err.value)
            assert srv.returncode is not None  # its own server, still loading, was stopped
    finally:
        srv.stop()
    assert not list_records(tmp_path)
