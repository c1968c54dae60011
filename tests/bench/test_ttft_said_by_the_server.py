"""TTFT in model time by the server's own ``first_token_latency`` (SGLang 0.5.23 sends it under
``--enable-metrics``; the simulator always).

On a sped-up server the client split its wall TTFT into the server's part (multiplied by the
speedup) and the loopback's (not) by the whole request's wall time beyond its ``e2e_latency``. That
time holds the end's delivery lag and the client's read of ``[DONE]`` too, a few wall ms on a loaded
machine, as much as a whole TTFT at 40x: the quick suite's TTFT at C=1 read 36.2, 2.2 and 50.0 model
ms in three runs against one simulator (QA). Real HTTP on 127.0.0.1: a scripted server whose end
comes late, and the simulator as a process."""

from __future__ import annotations

import asyncio
import json

from support.raw_server import RawServer, read_request
from support.simproc import running_sim

from tuner.bench.client import BenchClient
from tuner.bench.records import RequestRecord

SCALE = 40.0
FIRST_S = 0.015  #: the server's own first-token latency, wall seconds
E2E_S = 0.06  #: the server's own end-to-end latency, wall seconds


def _chunk(n: int, finish: bool = False, first_s: float = FIRST_S) -> bytes:
    meta = {"completion_tokens": n, "prompt_tokens": 3, "finish_reason": None}
    if finish:
        meta.update(finish_reason={"type": "length", "length": n}, e2e_latency=E2E_S, first_token_latency=first_s)
    return b"data: " + json.dumps({"text": "w" * n, "meta_info": meta}).encode() + b"\n\n"


class LateEndServer(RawServer):
    """A ``/generate`` stream of 4 tokens: the first 20 ms after the request, the rest 40 ms later,
    then ``[DONE]`` 100 ms after the finished chunk (a delivery that came late: time outside the
    server's clock, after the first token)."""

    def __init__(self, first_s: float = FIRST_S):
        self.first_s = first_s

    async def _handle(self, reader, writer):
        try:
            await read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
            await asyncio.sleep(0.02)
            writer.write(_chunk(1))
            await writer.drain()
            await asyncio.sleep(0.04)
            writer.write(_chunk(2) + _chunk(3) + _chunk(4, finish=True, first_s=self.first_s))
            await writer.drain()
            await asyncio.sleep(0.1)
            writer.write(b"data: [DONE]\n\n")
            await writer.drain()
        finally:
            writer.close()


def _ask(url: str, max_tokens: int = 4, stream: bool = True) -> RequestRecord:
    async def go():
        async with BenchClient(url, stream=stream, timeout_s=60) as client:
            client.set_time_scale(SCALE)
            return await client.request(RequestRecord(phase="single", prompt="p", max_tokens=max_tokens), "hi")
    return asyncio.run(go())


def test_a_late_end_leaves_the_servers_first_token_multiplied():
    with LateEndServer() as srv:
        r = _ask(srv.url)
    assert r.ok, r.error
    assert r.server_ttft_s == FIRST_S and r.ttft_s >= 0.02
    # the time outside e2e_latency (the late [DONE]) is longer than the whole TTFT: the old estimate
    # left nothing of the TTFT to the server and read the wall TTFT unscaled (~0.02 s)
    assert r.latency_s - r.server_latency_s > r.ttft_s
    model = r.model_ttft_s(SCALE)
    assert FIRST_S * SCALE <= model <= r.ttft_s * SCALE
    assert model - FIRST_S * SCALE <= r.ttft_s - FIRST_S + 1e-9  # only the loopback's part counted as it is


def test_a_first_token_later_than_the_end_fails_the_request():
    with LateEndServer(first_s=0.5) as srv:  # after its own e2e_latency of 0.06 s
        r = _ask(srv.url)
    assert not r.ok and r.error_kind == "protocol", r
    assert "first_token_latency 0.5 s is not within the e2e_latency 0.06 s" in r.error, r.error


def test_the_simulator_says_its_first_token_within_its_end():
    with running_sim(speedup=SCALE) as sim:
        streamed = _ask(sim.url, max_tokens=16)
        whole = _ask(sim.url, max_tokens=16, stream=False)
    for r in (streamed, whole):
        assert r.ok, r.error
        assert r.server_ttft_s is not None and 0 < r.server_ttft_s < r.server_latency_s, r
    assert streamed.model_ttft_s(SCALE) >= streamed.server_ttft_s * SCALE
