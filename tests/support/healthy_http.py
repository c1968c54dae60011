"""The tail of a stand-in server script: an HTTP server on ``port`` (a variable the script's head
sets, from its ``--port``) that answers 200 to ``/health`` and ``/health_generate`` and 404 to the
rest, bound with ``SO_REUSEADDR`` as uvicorn binds. Prefix it with what the stand-in does first
(fail, sleep through a model load, count its launches).

:data:`HEALTHY_THREAD_PY`: the middle of a stand-in server script that goes on after it serves (dies of
a signal, forks a helper that keeps the socket): the same answer from a background thread, the
listening socket kept as ``s``; :func:`script_server` runs such a script as a
:class:`tuner.server.launcher.ServerProcess`, :func:`struck_after_ready` strikes it once it is ready.

In the test's own process: :class:`Answers200` (200 with an empty body to every GET) and
:func:`serving`, a threaded HTTP server on 127.0.0.1 for a ``with`` block."""

import sys
import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class Answers200(BaseHTTPRequestHandler):
    """200 with an empty body to every GET, as SGLang answers ``/health``."""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@contextmanager
def serving(handler=Answers200, port: int = 0):
    """A threaded HTTP server of ``handler`` on 127.0.0.1 (``port`` 0: one picked), yielding its base
    URL; shut down and closed at the block's end."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()

def script_server(folder: Path, script: str, *args: str):
    """``script`` (a stand-in server's text, its port its first argument) written to
    ``folder/server.py`` and made a :class:`tuner.server.launcher.ServerProcess` on a free port of
    127.0.0.1: ``python server.py PORT ARGS...``, its log ``folder/server.log``, a startup timeout of
    60 s and a stop grace of 1 s; not started."""
    from tuner.server.launcher import ServerProcess
    from tuner.server.ports import pick_free_port

    path = folder / "server.py"
    path.write_text(script)
    port = pick_free_port("127.0.0.1")
    return ServerProcess.from_argv([sys.executable, str(path), str(port), *args], host="127.0.0.1", port=port,
                                   log_path=folder / "server.log", workdir=folder, startup_timeout_s=60,
                                   stop_grace_s=1)


def struck_after_ready(srv, go: Path, exit_wait_s: float = 30) -> tuple[str, str]:
    """Start ``srv``, wait until it is ready, create ``go`` (the script's cue to fail) and classify its
    exit (``ServerProcess.classify_exit``); stopped afterwards whatever happened. Returns the failure
    class and message."""
    try:
        srv.start()
        srv.wait_ready()
        go.write_text("")
        failure_class, message, _ = srv.classify_exit(exit_wait_s=exit_wait_s)
    finally:
        srv.stop()
    return failure_class, message


HEALTHY_SERVER_PY = """
from http.server import BaseHTTPRequestHandler, HTTPServer

class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path in ("/health_generate", "/health") else 404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

HTTPServer(("127.0.0.1", port), Handler).serve_forever()
"""

HEALTHY_THREAD_PY = """
import socket as _socket, threading as _threading

s = _socket.socket()
s.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(16)

def _serve():
    # one read, 200 with an empty body to whatever was asked, closed; the socket stays the script's
    # own (s), for a helper to inherit
    while True:
        c, _ = s.accept()
        c.recv(65536)
        c.sendall(b"HTTP/1.1 200 OK\\r\\nContent-Length: 0\\r\\nConnection: close\\r\\n\\r\\n")
        c.close()

_threading.Thread(target=_serve, daemon=True).start()
"""
