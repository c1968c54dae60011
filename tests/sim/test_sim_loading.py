"""The simulated server's readiness routes, as SGLang 0.5.23's (``srt/entrypoints/http_server.py``)."""

from __future__ import annotations

import signal
import threading
import time

import requests
from support.lifecycle import long_body, wait_busy
from support.simproc import running_sim


def _status(url: str) -> int | None:
    try:
        return requests.get(url, timeout=5).status_code
    except requests.ConnectionError:
        return None


def test_ready_is_503_while_shutting_down():
    """http_server.py ready: ``is_ready()`` is false once ``gracefully_exit`` is set (SIGTERM); the
    simulator had no /ready route (aiohttp's 404)."""
    with running_sim(speedup=50.0) as sim:
        threading.Thread(target=lambda: requests.post(
            sim.url + "/generate", data=long_body(), timeout=30,
            headers={"Content-Type": "application/json"}), daemon=True).start()
        wait_busy(sim.url)
        assert _status(sim.url + "/ready") == 200
        sim.proc.send_signal(signal.SIGTERM)
        statuses = set()
        t0 = time.monotonic()
        while sim.proc.poll() is None and time.monotonic() - t0 < 5:
            status = _status(sim.url + "/ready")
            if status is None:
                break
            statuses.add(status)
        assert 503 in statuses, statuses
