"""A stream whose whole reply comes in one write (a server or proxy that buffers it, a client that fell
behind): no gap between its tokens was seen, so its TPOT and inter-token gaps are unknown, not the
microseconds between reading lines already received (QA: TPOT 0.015 ms, ITL p50 0.008 ms, and every
request good under a 1 ms TPOT limit, for 16 tokens sent together after 50 ms). Real HTTP on
127.0.0.1; the control streams its chunks 20 ms apart."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.raw_server import RawServer, read_request

from tuner.bench.client import BenchClient
from tuner.bench.records import RequestRecord
from tuner.bench.result import SuiteResult

N = 16
HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"


def _generate(n: int) -> dict:
    return {"text": "w" * n, "meta_info": {"completion_tokens": n, "prompt_tokens": 3,
                                           "finish_reason": {"type": "length"} if n == N else None}}


def _completion(n: int) -> dict:
    return {"choices": [{"index": 0, "text": "w", "finish_reason": "length" if n == N else None}],
            "usage": {"prompt_tokens": 3, "completion_tokens": n, "total_tokens": n + 3}}


class Stream(RawServer):
    """``N`` one-token chunks and ``[DONE]``, 50 ms after the request: in one write, or ``gap_s`` apart."""

    def __init__(self, gap_s: float | None = None):
        self.gap_s = gap_s

    async def _handle(self, reader, writer):
        try:
            head = await read_request(reader)
            chunk = _generate if b"/generate" in head else _completion
            lines = [b"data: " + json.dumps(chunk(i)).encode() + b"\n\n" for i in range(1, N + 1)]
            lines.append(b"data: [DONE]\n\n")
            await asyncio.sleep(0.05)
            if self.gap_s is None:
                writer.write(HEAD + b"".join(lines))
            else:
                writer.write(HEAD)
                for line in lines:
                    writer.write(line)
                    await writer.drain()
                    await asyncio.sleep(self.gap_s)
            await writer.drain()
        finally:
            writer.close()


def _sweep(url: str, api: str) -> list[RequestRecord]:
    async def go():
        async with BenchClient(url, api=api, stream=True, timeout_s=60) as client:
            records = []
            for i in range(2):
                r = RequestRecord("sweep", "p", N, repeat=i, concurrency=1)
                records.append(await client.request(r, "hi"))
            return records
    return asyncio.run(go())


@pytest.mark.parametrize("api", ["generate", "openai"])
def test_a_reply_in_one_write_has_no_time_per_token(api):
    with Stream() as srv:
        records = _sweep(srv.url, api)
    for r in records:
        assert r.ok, r.error
        assert r.ttft_s >= 0.05  # the first token's arrival is measured
        assert r.tpot_s is None and r.itl_s == [] and r.gaps_unseen, r
    res = SuiteResult(suite={"name": "t"}, records=records, complete=True)
    assert res.latency_percentile_ms("tpot", 50, 1) is None
    assert res.latency_percentile_ms("itl", 50, 1) is None
    assert res.goodput(1, {"tpot": 1.0}) is None  # no TPOT to judge a request on, rather than all good
    assert res.latency_percentile_ms("ttft", 50, 1) >= 50.0


def test_a_reply_streamed_token_by_token_keeps_its_gaps():
    with Stream(gap_s=0.02) as srv:
        records = _sweep(srv.url, "generate")
    for r in records:
        assert r.ok and not r.gaps_unseen, r
        # each gap as read: a line read late makes the next gap shorter, so the gaps are judged whole
        # (the server sleeps 20 ms between tokens) and each far above the microseconds of lines already in
        assert len(r.itl_s) == N - 1 and min(r.itl_s) > 0.002 and r.tpot_s >= 0.019, r
    res = SuiteResult(suite={"name": "t"}, records=records, complete=True)
    assert res.goodput(1, {"tpot": 1.0})["good"] == 0
