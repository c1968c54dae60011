"""The two lifecycle events of issue 16 on a running simulator: a client that gives up on a long
request, and SIGTERM with requests in flight.

``tests/sim/test_sim_lifecycle.py`` asserts what happens (with deadlines generous enough for a
loaded 2-core machine); ``benchmarks/sim_lifecycle.py`` prints how long it took. Both use these
helpers, so the benchmark times exactly what the test checks.

    gave_up = abandon(sim.url)                 # the client's timeout fires; returns when it did
    took = flush_ok_within(sim.url, 20.0)      # seconds until /flush_cache answered 200, or None
    down = sigterm_in_flight(sim, n=4)         # Shutdown(code, seconds, answers)
"""

from __future__ import annotations

import json
import signal
import threading
import time
from dataclasses import dataclass, field

import requests

PROMPT = "Write a Python function that returns the n-th Fibonacci number."
#: Within the default profile's 8192-token context; ~300 model s of autoregressive decoding.
LONG_TOKENS = 8000
_JSON = {"Content-Type": "application/json"}


def long_body(tokens: int = LONG_TOKENS, stream: bool = False) -> bytes:
    """A ``/generate`` body that keeps the server busy for ``tokens`` decode steps."""
    return json.dumps({"text": PROMPT, "stream": stream,
                       "sampling_params": {"max_new_tokens": tokens, "ignore_eos": True}}).encode()


def busy(url: str) -> bool:
    """Whether the server holds any request (SGLang's /flush_cache answers 400 then)."""
    return requests.post(url + "/flush_cache", timeout=5).status_code == 400


def wait_busy(url: str, deadline_s: float = 10.0) -> None:
    """Return once a request reached the server; AssertionError after ``deadline_s``."""
    t0 = time.monotonic()
    while not busy(url):
        assert time.monotonic() - t0 < deadline_s, "the request never reached the server"
        time.sleep(0.01)


def wait_running(url: str, n: int, deadline_s: float = 30.0) -> None:
    """Return once the simulator runs ``n`` requests (its ``sim_running_requests``); AssertionError
    after ``deadline_s``."""
    t0 = time.monotonic()
    while requests.get(url + "/server_info", timeout=10).json()["sim_running_requests"] < n:
        assert time.monotonic() - t0 < deadline_s, f"{n} requests never ran on the server at once"
        time.sleep(0.01)


def flush_ok_within(url: str, deadline_s: float) -> float | None:
    """Seconds until /flush_cache answered 200, or None if it never did before the deadline."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < deadline_s:
        if requests.post(url + "/flush_cache", timeout=5).status_code == 200:
            return time.monotonic() - t0
        time.sleep(0.02)
    return None


def abandon(url: str, client_timeout_s: float = 0.5) -> float:
    """Send a long non-streamed request and give up after ``client_timeout_s`` (the client's read
    timeout closes the connection). Returns ``time.monotonic()`` when the client gave up."""
    try:
        requests.post(url + "/generate", data=long_body(), timeout=client_timeout_s, headers=_JSON)
    except requests.Timeout:
        return time.monotonic()
    raise AssertionError("the long request finished before the client's timeout")


@dataclass
class Shutdown:
    """What SIGTERM with requests in flight came to."""

    code: int | None  #: exit code (None: still running at the deadline)
    seconds: float  #: from the signal to the exit (or to the deadline)
    #: (status or "error", end of the body) per request; streamed ones answer 200 and end in an error chunk
    answers: list = field(default_factory=list)


def sigterm_in_flight(sim, n: int = 4, deadline_s: float = 20.0) -> Shutdown:
    """Start ``n`` long requests (every other one streamed), SIGTERM the server once they are in,
    and wait up to ``deadline_s`` for it to exit. ``sim`` is a :class:`support.simproc.SimProcess`."""
    answers: list = []

    def call(stream: bool) -> None:
        try:
            r = requests.post(sim.url + "/generate", data=long_body(stream=stream), timeout=deadline_s + 30,
                              headers=_JSON)
            answers.append((r.status_code, r.text[-200:]))
        except requests.RequestException as exc:
            answers.append(("error", str(exc)))

    threads = [threading.Thread(target=call, args=(i % 2 == 1,)) for i in range(n)]
    for t in threads:
        t.start()
    wait_running(sim.url, n)  # all of them in flight (a fixed pause missed some on a loaded machine)
    t0 = time.monotonic()
    sim.proc.send_signal(signal.SIGTERM)
    try:
        code = sim.wait(deadline_s)
    except Exception:  # noqa: BLE001 - subprocess.TimeoutExpired: report it, the caller asserts
        code = None
    took = time.monotonic() - t0
    for t in threads:
        t.join(10)
    return Shutdown(code, took, answers)
