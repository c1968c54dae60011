"""What a client meets while the simulated server loads, as with SGLang 0.5.23: no HTTP server at all.

SGLang opens its HTTP port only after the scheduler has loaded the model
(``srt/entrypoints/http_server.py`` ``launch_server``: ``Engine._launch_subprocesses`` blocks until the
schedulers are ready, lines 3150-3161, and only then does ``_setup_and_run_http_server`` start
uvicorn). A client that connects meanwhile is refused; the simulator answered 503 instead (to
``/generate`` with a JSON error, and ``/server_info`` with 200), so a client that handled only one of
the two ran against the simulator only.
"""

from __future__ import annotations

import signal
import threading
import time

import pytest
import requests
from support.lifecycle import long_body, wait_busy
from support.simproc import running_sim

ROUTES = [("GET", "/health"), ("GET", "/health_generate"), ("GET", "/ready"), ("GET", "/server_info"),
          ("GET", "/v1/models"), ("POST", "/generate"), ("POST", "/v1/completions")]


def _wait_for(predicate, timeout_s: float = 20.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _status(url: str) -> int | None:
    try:
        return requests.get(url, timeout=5).status_code
    except requests.ConnectionError:
        return None


def test_connections_are_refused_while_loading_then_served():
    with running_sim("--sim-load-seconds", "2", speedup=200.0, ready=False) as sim:
        assert "Load weight end" not in sim.log
        for method, route in ROUTES:
            with pytest.raises(requests.ConnectionError):
                requests.request(method, sim.url + route, json={"text": "hi", "prompt": "hi"}, timeout=5)
        assert "Load weight end" not in sim.log, "the load ended before every route was tried: load 2 s"
        _wait_for(lambda: _status(sim.url + "/health_generate") == 200)
        # http_server.py ready (lines 714-718): 200 once the tokenizer manager is ready
        r = requests.get(sim.url + "/ready", timeout=5)
        assert (r.status_code, r.content) == (200, b"")
        assert requests.post(sim.url + "/generate", timeout=10, json={
            "text": "hi", "sampling_params": {"max_new_tokens": 2}}).status_code == 200


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
