"""The readiness probe takes the server's own answer only: a redirect (3xx) to another address is no
health answer of the server on the port. aiohttp follows redirects unless told not to, so a proxy or
stale process answering ``307 Location: <another server>/health`` read as the launch being ready
while the other server answered 200. Two real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tuner.server.health import answer_status


def _serve(handler_class):
    srv = ThreadingHTTPServer(("127.0.0.1", 0), handler_class)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return srv


class _Healthy(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("code", [301, 302, 307, 308])
def test_a_redirect_to_a_healthy_server_is_not_ready(code):
    healthy = _serve(_Healthy)
    target = f"http://127.0.0.1:{healthy.server_address[1]}/health"

    class Redirect(_Healthy):
        def do_GET(self):
            self.send_response(code)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()

    redirecting = _serve(Redirect)
    try:
        assert answer_status(target, 5.0) == 200  # the other server is healthy
        status = answer_status(f"http://127.0.0.1:{redirecting.server_address[1]}/health", 5.0)
    finally:
        for srv in (healthy, redirecting):
            srv.shutdown()
            srv.server_close()
    assert status == code  # the port's own answer, never the other server's 200
