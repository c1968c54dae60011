"""``/flush_cache?timeout=S`` as SGLang 0.5.23 answers it (``srt/entrypoints/http_server.py`` lines
1025-1040; ``srt/managers/scheduler_components/flush_wrapper.py``): with a timeout, a busy server
defers the flush until it is idle, for up to S seconds; the simulator ignored the query and answered
400 at once."""

from __future__ import annotations

import threading

import pytest
import requests
from support.lifecycle import long_body, wait_busy
from support.simproc import running_sim

JSON = {"Content-Type": "application/json"}


@pytest.fixture(scope="module")
def sim():
    with running_sim(speedup=400.0) as s:
        yield s


def _in_flight(sim, tokens: int) -> dict:
    """Start one /generate of ``tokens`` tokens; the dict gets its status once answered."""
    answer: dict = {}

    def run():
        answer["status"] = requests.post(sim.url + "/generate", data=long_body(tokens), headers=JSON,
                                         timeout=120).status_code

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    answer["thread"] = thread
    wait_busy(sim.url)
    return answer


def test_flush_with_a_timeout_waits_for_idle(sim):
    # 1,000 tokens: a few model seconds, well under the flush's 100,000 s (model time)
    answer = _in_flight(sim, 1000)
    r = requests.post(sim.url + "/flush_cache", params={"timeout": "100000"}, timeout=120)
    assert r.status_code == 200, r.text
    assert r.text.startswith("Cache flushed.")
    answer["thread"].join(60)
    assert answer["status"] == 200  # the request ran to its end; the flush waited for it


def test_flush_timeout_runs_out_and_a_second_flush_is_refused():
    with running_sim(speedup=20.0) as slow:  # 8,000 tokens: ~300 model s, ~15 s of wall time
        _in_flight(slow, 8000)
        late = {}
        waiting = threading.Thread(target=lambda: late.update(r=requests.get(
            slow.url + "/flush_cache", params={"timeout": "20"}, timeout=120)), daemon=True)
        waiting.start()
        # flush_wrapper.py handle: one deferred flush at a time; polled until the first is pending
        # (before that, the plain busy answer); the first waits 20 model s, 1 s of wall time
        for _ in range(500):
            second = requests.post(slow.url + "/flush_cache", timeout=10)
            if second.text != "Flush cache failed.\n" or late:
                break
        assert (second.status_code, second.text) == (400, "Another flush_cache is already in progress.")
        waiting.join(60)
        assert (late["r"].status_code, late["r"].text) == (400, "Timed out waiting for idle state.")
        # the request still runs: a plain flush is refused as busy
        again = requests.post(slow.url + "/flush_cache", timeout=10)
        assert (again.status_code, again.text) == (400, "Flush cache failed.\n")


@pytest.mark.parametrize("value, error", [("abc", "'type': 'float_parsing'"), ("-1", "'type': 'greater_than_equal'")])
def test_bad_flush_timeout_is_fastapis_400(sim, value, error):
    r = requests.get(sim.url + "/flush_cache", params={"timeout": value}, timeout=10)
    assert r.status_code == 400
    body = r.json()
    assert (body["object"], body["type"], body["code"]) == ("error", "Bad Request", 400)
    assert error in body["message"] and "'loc': ('query', 'timeout')" in body["message"]
    assert body["message"].endswith("]") and "    GET /flush_cache" in body["message"]
