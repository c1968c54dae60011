"""The port of a launched server is held by the tuner from the launch to the stop (a socket bound with
SO_REUSEADDR that never listens: ``tuner.server.ports.reserve_port``). SGLang binds ``--port`` only
after loading the model, minutes later; until then nothing kept another tuner worker on the node from
picking the same free port (two servers launched on one ``--port``: one of them loses a model load
to "address already in use", or answers the other's health checks), nor SGLang's own nccl_port pick
or an outgoing connection from taking it. The server's own bind (uvicorn's, with SO_REUSEADDR) still
succeeds."""

from __future__ import annotations

import sys

from support.healthy_http import HEALTHY_SERVER_PY
from support.processes import STARTED_GROUPS

from tuner.config.study import ServerSettings
from tuner.server import ports
from tuner.server.launcher import ServerProcess

PY = sys.executable

LOADING = "import time; time.sleep(600)"
SERVING = """
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer  # binds with SO_REUSEADDR, as uvicorn does
a = sys.argv[1:]
port = int(a[a.index("--port") + 1])
""" + HEALTHY_SERVER_PY


def server(tmp_path, name: str, code: str) -> ServerProcess:
    script = tmp_path / f"{name}.py"
    script.write_text(code)
    wrapper = tmp_path / f"python-{name}"
    wrapper.write_text(f'#!/bin/sh\nexec "{PY}" "{script}" "$@"\n')
    wrapper.chmod(0o755)
    settings = ServerSettings.model_validate({
        "backend": "sim", "python": str(wrapper), "model_path": "org/model", "draft_model_path": "org/draft",
        "tp_size": 8, "startup_timeout_s": 60, "stop_grace_s": 5, "sim": {"speedup": 5000.0}})
    return ServerProcess(settings, None, workdir=tmp_path / name, port=0)


def test_a_second_pick_never_gets_the_port_of_a_server_still_loading(tmp_path, monkeypatch):
    first = server(tmp_path, "first", LOADING)
    taken = first.port
    # every pick offers that port first, as a second tuner worker's may
    monkeypatch.setattr(ports.random, "sample", lambda population, k: [taken, *list(population)[:k - 1]])
    try:
        first.start()
        STARTED_GROUPS.add(first.pgid)
        assert first.port == taken
        second = server(tmp_path, "second", LOADING)
        assert second.port != taken
    finally:
        first.stop()
    # stopped: the port is free again for anyone
    assert server(tmp_path, "third", LOADING).port == taken


def test_the_server_binds_its_held_port(tmp_path):
    srv = server(tmp_path, "serving", SERVING)
    try:
        srv.start()
        STARTED_GROUPS.add(srv.pgid)
        assert srv.wait_ready() == f"http://127.0.0.1:{srv.port}"
    finally:
        srv.stop()
