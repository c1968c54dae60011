"""The tail of a stand-in server script: an HTTP server on ``port`` (a variable the script's head
sets, from its ``--port``) that answers 200 to ``/health`` and ``/health_generate`` and 404 to the
rest, bound with ``SO_REUSEADDR`` as uvicorn binds. Prefix it with what the stand-in does first
(fail, sleep through a model load, count its launches).

:data:`HEALTHY_THREAD_PY`: the middle of a stand-in server script that goes on after it serves (dies of
a signal, forks a helper that keeps the socket): the same answer from a background thread, the
listening socket kept as ``s``.

In the test's own process: :class:`Answers200` (200 with an empty body to every GET) and
:func:`serving`, a threaded HTTP server on 127.0.0.1 for a ``with`` block."""

import threading
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


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
