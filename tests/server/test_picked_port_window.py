"""The port the tuner picks for a server (``server.port: 0``) lies below the kernel's ephemeral range,
as SGLang 0.5.23 picks its own late-bound nccl_port (``PortArgs.init_new``: "keep it out of the
ephemeral range"): SGLang binds ``--port`` only after the model load, and until then the kernel hands
ephemeral ports to every ``connect()`` and ``bind(0)`` of the node, SGLang's own ZMQ sockets on
127.0.0.1 included (``shm_broadcast.py``, ``bind_to_random_port``: 49152 up), each a relaunch and a
model load lost. Before, ``bind(0)`` picked from that very range (32768-60999 here)."""

from __future__ import annotations

import socket
from pathlib import Path

from tuner.config.study import ServerSettings
from tuner.server import ports
from tuner.server.launcher import ServerProcess


def ephemeral_low() -> int:
    return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])


def window() -> range:
    return range(20000, min(29999, ephemeral_low() - 1) + 1)


def test_a_picked_port_is_below_the_ephemeral_range():
    picked = [ports.pick_free_port("127.0.0.1") for _ in range(30)]
    assert all(p in window() for p in picked), (picked, ephemeral_low())


def test_a_server_on_port_0_gets_such_a_port(tmp_path):
    server = ServerSettings.model_validate({"backend": "sim", "model_path": "org/model", "tp_size": 1, "port": 0})
    srv = ServerProcess(server, None, workdir=tmp_path)
    assert srv.port in window() and f"--port {srv.port}" in srv.command_line


def test_a_held_port_is_passed_over(monkeypatch):
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen()
    tried = []

    def sample(population, k):
        tried.append(k)
        return [held.getsockname()[1]] + [p for p in population][:k - 1]

    try:
        monkeypatch.setattr(ports.random, "sample", sample)
        port = ports.pick_free_port("127.0.0.1")
        assert port != held.getsockname()[1] and port in window() and tried == [ports.PICK_ATTEMPTS]
    finally:
        held.close()
