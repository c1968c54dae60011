"""The readiness probe takes the server's own answer only: a redirect (3xx) to another address is no
health answer of the server on the port. aiohttp follows redirects unless told not to, so a proxy or
stale process answering ``307 Location: <another server>/health`` read as the launch being ready
while the other server answered 200. Two real HTTP servers on 127.0.0.1."""

from __future__ import annotations

import pytest
from support.healthy_http import Answers200, serving

from tuner.server.health import answer_status


@pytest.mark.parametrize("code", [301, 302, 307, 308])
def test_a_redirect_to_a_healthy_server_is_not_ready(code):
    with serving() as healthy:
        target = healthy + "/health"

        class Redirect(Answers200):
            def do_GET(self):
                self.send_response(code)
                self.send_header("Location", target)
                self.send_header("Content-Length", "0")
                self.end_headers()

        with serving(Redirect) as redirecting:
            assert answer_status(target, 5.0) == 200  # the other server is healthy
            status = answer_status(redirecting + "/health", 5.0)
    assert status == code  # the port's own answer, never the other server's 200
