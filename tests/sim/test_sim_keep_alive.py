"""The simulator closes an idle keep-alive connection when SGLang 0.5.23 does.

SGLang's HTTP server hands ``SGLANG_TIMEOUT_KEEP_ALIVE`` (``srt/environ.py``: ``EnvInt(5)``) to uvicorn
as ``timeout_keep_alive`` (``entrypoints/http_server.py`` ``launch_server``); aiohttp's default keeps an
idle connection for an hour, so a client that reuses connections SGLang has closed passed against the
simulator alone.
"""

from __future__ import annotations

import http.client
import logging
import socket
import time

from support.simproc import running_sim

from tuner.sim.server import SGLANG_KEEP_ALIVE_DEFAULT_S, keep_alive_s

#: how long the test waits at most for the close (the server's limit is 1 s here)
DEADLINE_S = 30.0


def test_the_keep_alive_limit_is_read_as_sglang_reads_it(monkeypatch, caplog):
    monkeypatch.delenv("SGLANG_TIMEOUT_KEEP_ALIVE", raising=False)
    assert keep_alive_s() == SGLANG_KEEP_ALIVE_DEFAULT_S == 5
    monkeypatch.setenv("SGLANG_TIMEOUT_KEEP_ALIVE", "12")
    assert keep_alive_s() == 12
    monkeypatch.setenv("SGLANG_TIMEOUT_KEEP_ALIVE", "5s")
    with caplog.at_level(logging.WARNING, logger="tuner.sim"):
        assert keep_alive_s() == 5
    assert 'Invalid value for SGLANG_TIMEOUT_KEEP_ALIVE: "5s" is not a valid integer value' in caplog.text


def _closed_by_server(sock: socket.socket, deadline: float) -> bool:
    """Whether the server closes ``sock`` (an idle connection) before ``deadline``."""
    while time.monotonic() < deadline:
        sock.settimeout(max(0.1, min(1.0, deadline - time.monotonic())))
        try:
            if sock.recv(1) == b"":
                return True
        except socket.timeout:
            continue
        except ConnectionResetError:
            return True
    return False


def test_an_idle_connection_is_closed_after_sglang_timeout_keep_alive(monkeypatch):
    monkeypatch.setenv("SGLANG_TIMEOUT_KEEP_ALIVE", "1")
    with running_sim() as sim:
        conn = http.client.HTTPConnection("127.0.0.1", sim.port, timeout=DEADLINE_S)
        try:
            conn.request("GET", "/v1/models")
            answer = conn.getresponse()
            assert answer.status == 200 and answer.read()
            assert not answer.will_close  # a keep-alive connection, idle from here
            assert _closed_by_server(conn.sock, time.monotonic() + DEADLINE_S), sim.log[-2000:]
        finally:
            conn.close()
