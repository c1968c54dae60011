"""The readiness probe gives up as soon as the server it waits for has exited (``gone``): another
process holding the port that answers late or never held each probe for its whole timeout, so a
server that exited at once on "address already in use" was seen to exit only 10 s later, at every
port clash (QA, qa140: the port-clash tests waited 10 s each). A real HTTP server on 127.0.0.1 that
answers after a delay."""

from __future__ import annotations

import time

from support.healthy_http import Answers200, serving

from tuner.server.health import answer_status


class _Late(Answers200):
    def do_GET(self):
        time.sleep(2.0)
        super().do_GET()


def test_a_probe_of_a_server_that_has_exited_gives_up_and_one_still_running_waits():
    asked = []

    def exited() -> bool:
        asked.append(True)
        return True

    with serving(_Late) as base:
        url = base + "/health"
        assert answer_status(url, 8.0, gone=exited) is None  # not the late 200: the server is gone
        assert len(asked) == 1
        assert answer_status(url, 8.0, gone=lambda: False) == 200  # still running: its answer counts
        assert answer_status(url, 8.0) == 200
