"""``/health_generate`` as SGLang 0.5.23 answers it (``srt/entrypoints/http_server.py`` lines 721-799).

On an idle server it runs a one-token generation that the metrics leave out (``log_metrics=False``;
``tokenizer_manager.py`` line 2788). On a busy server the scheduler skips the health request and the
running requests' outputs answer for it (``scheduler.py`` lines 2240-2246), so a probe takes no
batch slot. QA: the simulator queued every health check as a request, counted in ``/metrics``
(``sglang:num_requests_total`` grew by one per probe, the tuner's readiness polls included), and
behind a full batch a probe waited for a slot: minutes, where SGLang answers in about a second.
"""

from __future__ import annotations

import json
import re

import requests
from support.simproc import running_sim

JSON = {"Content-Type": "application/json"}


def _counter(url: str, name: str) -> float:
    text = requests.get(url + "/metrics", timeout=30).text
    found = re.search(rf"^sglang:{name}\{{[^}}]*\}} (\S+)$", text, re.M)
    assert found is not None, text
    return float(found.group(1))


def test_health_checks_are_left_out_of_the_metrics():
    with running_sim("--enable-metrics", speedup=200.0) as sim:  # ready: it answered /health_generate
        for path in ("/health_generate", "/health", "/health_generate"):
            assert requests.get(sim.url + path, timeout=30).status_code == 200
        assert _counter(sim.url, "num_requests_total") == 0
        assert _counter(sim.url, "generation_tokens_total") == 0
        r = requests.post(sim.url + "/generate", headers=JSON, timeout=30, data=json.dumps(
            {"text": "hi", "sampling_params": {"max_new_tokens": 3}}).encode())
        assert r.status_code == 200, r.text
        assert _counter(sim.url, "num_requests_total") == 1
        assert _counter(sim.url, "generation_tokens_total") == 3


def test_a_health_check_on_a_full_batch_takes_no_slot():
    """One slot (--max-running-requests 1), held by a request of minutes at --sim-speedup 1: the
    probe answers 200 while that request still runs, and nothing joined the queue behind it."""
    with running_sim("--max-running-requests", "1", "--enable-metrics", speedup=1.0, timeout_s=60.0) as sim:
        long = requests.post(sim.url + "/generate", stream=True, timeout=60, headers=JSON, data=json.dumps(
            {"text": "hi", "stream": True, "sampling_params": {"max_new_tokens": 8000, "ignore_eos": True}}
        ).encode())
        lines = long.iter_lines()
        assert next(lines).startswith(b"data: ")  # it holds the slot now
        assert requests.get(sim.url + "/health_generate", timeout=60).status_code == 200
        assert _counter(sim.url, "num_running_reqs") == 1
        assert _counter(sim.url, "num_queue_reqs") == 0
        assert _counter(sim.url, "num_requests_total") == 0  # the long one is still running
        long.close()
