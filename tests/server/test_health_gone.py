"""The readiness probe gives up as soon as the server it waits for has exited (``gone``): another
process holding the port that answers late or never held each probe for its whole timeout, so a
server that exited at once on "address already in use" was seen to exit only 10 s later, at every
port clash (QA, qa140: the port-clash tests waited 10 s each). A real HTTP server on 127.0.0.1 that
answers after a delay."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from tuner.server.health import answer_status


class _Late(BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(2.0)
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_probe_of_a_server_that_has_exited_gives_up_and_one_still_running_waits():
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Late)
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    url = f"http://127.0.0.1:{srv.server_address[1]}/health"
    asked = []

    def exited() -> bool:
        asked.append(True)
        return True

    try:
        assert answer_status(url, 8.0, gone=exited) is None  # not the late 200: the server is gone
        assert len(asked) == 1
        assert answer_status(url, 8.0, gone=lambda: False) == 200  # still running: its answer counts
        assert answer_status(url, 8.0) == 200
    finally:
        srv.shutdown()
        srv.server_close()
