"""A ``/generate`` stream whose speculative figures are not the request's so far (raw HTTP on
127.0.0.1, through ``BenchClient.request``): SGLang 0.5.23 sends ``spec_verify_ct`` and
``spec_accept_length`` in every chunk once the request's verify count is above 0, counting up. A chunk
that drops them, or a verify count that falls, fails the request (``protocol``) naming it; before, the
figures of an earlier chunk stood for the whole answer (QA: accept length 8.0 for 8 tokens, measured)."""

from __future__ import annotations

import asyncio

import pytest
from support.raw_server import SseServer as StreamServer

from tuner.bench.client import BenchClient
from tuner.bench.records import RequestRecord


def chunk(text: str, n: int, finished: bool = False, **spec) -> dict:
    meta = {"prompt_tokens": 5, "completion_tokens": n, "e2e_latency": 0.001,
            "finish_reason": {"type": "length", "length": 8} if finished else None, **spec}
    return {"text": text, "meta_info": meta}


def ask(url: str) -> RequestRecord:
    async def go():
        async with BenchClient(url, stream=True, timeout_s=60) as client:
            return await client.request(RequestRecord(phase="single", prompt="p", max_tokens=8), "hello")
    return asyncio.run(go())


@pytest.mark.parametrize("chunks, said", [
    # the finished chunk says no verify steps: the chunk at 4 tokens' one step stood for all 8
    ([chunk("abcd", 4, spec_verify_ct=1, spec_accept_length=4.0), chunk("abcdefgh", 8, True), "[DONE]"],
     "the stream's chunks said spec_verify_ct 1, then a chunk said none"),
    # null is none too
    ([chunk("abcd", 4, spec_verify_ct=2), chunk("abcdefgh", 8, True, spec_verify_ct=None), "[DONE]"],
     "the stream's chunks said spec_verify_ct 2, then a chunk said none"),
    # the accept length alone, dropped at the end: the earlier chunk's was kept as the answer's
    ([chunk("abcd", 4, spec_accept_length=4.0), chunk("abcdefgh", 8, True), "[DONE]"],
     "the stream's chunks said spec_accept_length 4, then a chunk said none"),
    # a verify count that falls is no count of the request's steps so far (read: accept length 4.0)
    ([chunk("abcd", 4, spec_verify_ct=3), chunk("abcdefgh", 8, True, spec_verify_ct=2), "[DONE]"],
     "spec_verify_ct went back from 3 to 2 within the stream"),
])
def test_speculative_figures_that_are_not_the_requests_so_far_fail_the_request(chunks, said):
    with StreamServer(chunks) as srv:
        record = ask(srv.url)
    assert not record.ok and record.error_kind == "protocol", record
    assert said in record.error, record.error
    assert record.accept_length is None  # no accept length of a failed request reaches a figure


def test_figures_that_start_after_the_prefill_and_count_up_are_measured():
    # SGLang 0.5.23's way: the prefill's chunk says none (no verify step yet), then every chunk the
    # request's figures so far, rising; the last chunk's are the answer's
    chunks = [chunk("a", 1), chunk("abcd", 4, spec_verify_ct=1, spec_accept_length=4.0),
              chunk("abcdefgh", 8, True, spec_verify_ct=3, spec_accept_length=8 / 3), "[DONE]"]
    with StreamServer(chunks) as srv:
        record = ask(srv.url)
    assert record.ok, record.error
    assert record.spec_verify_ct == 3 and record.accept_length == pytest.approx(8 / 3)
