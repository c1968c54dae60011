"""The bench client against a server whose stream never ends, or sends more text chunks than tokens:
a real asyncio server on 127.0.0.1 (in a thread), one request through ``BenchClient.request``. A
stream's lines are each capped (aiohttp's 2 MiB), but what the client held of them was not: the text
and one inter-token gap per chunk grew until the request's timeout (QA: 900 MB in 15 s of one
request, a suite timeout of 300 s would hold 18 GB)."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.raw_server import RawServer, read_request

from tuner.bench.client import MAX_ANSWER_BYTES, BenchClient
from tuner.bench.records import RequestRecord

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"


class StreamServer(RawServer):
    """Answers every request with ``HEAD`` and then the SSE lines ``chunks()`` yields (bytes, each a
    whole ``data:`` event), closing the connection when they run out or the client goes."""

    def __init__(self, chunks):
        self.chunks = chunks

    async def _handle(self, reader, writer):
        try:
            await read_request(reader)
            writer.write(HEAD)
            for chunk in self.chunks():
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client gave up on the stream: what is under test
        finally:
            writer.close()


def event(obj) -> bytes:
    return b"data: " + json.dumps(obj).encode() + b"\n\n"


def ask(port: int, api: str, max_tokens: int, timeout_s: float, incremental: bool = False) -> RequestRecord:
    async def go():
        url = f"http://127.0.0.1:{port}"
        async with BenchClient(url, api=api, stream=True, timeout_s=timeout_s) as client:
            client.incremental_stream = incremental
            return await client.request(RequestRecord("single", "p", max_tokens), "hello")
    return asyncio.run(go())


@pytest.mark.parametrize("api", ["openai", "chat", "generate"])
def test_a_stream_whose_text_never_ends_fails_once_past_what_an_answer_can_need(api):
    piece = "x" * 400_000  # a line well under aiohttp's 2 MiB line cap

    def endless():
        count = 0
        while True:
            count += 1
            if api == "generate":  # new text only (--incremental-streaming-output), its count honest:
                # one more token a chunk (text beside an unchanged count fails at once, a chunk sent twice)
                yield event({"text": piece, "meta_info": {"completion_tokens": count, "finish_reason": None}})
            elif api == "chat":
                yield event({"choices": [{"index": 0, "delta": {"content": piece}}]})
            else:
                yield event({"choices": [{"index": 0, "text": piece}]})

    with StreamServer(endless) as srv:
        # the timeout is far beyond the ~42 chunks that pass 16 MiB; before, the request was read to
        # the timeout, holding every piece
        record = ask(srv.port, api, 1000 if api == "generate" else 8, timeout_s=20,
                     incremental=api == "generate")
    assert not record.ok and record.error_kind == "protocol", record.error
    assert f"the stream's text passed the {MAX_ANSWER_BYTES // 2**20} MiB" in record.error, record.error


def test_text_chunks_past_the_tokens_asked_keep_no_gap_per_chunk():
    # a server that ignores continuous_usage_stats: each text chunk is guessed one token; 50 of them
    # for 8 asked, and the stream cut before its count: the record kept 49 gaps for 8 tokens
    def chunks():
        for _ in range(50):
            yield event({"choices": [{"index": 0, "text": "a"}]})

    with StreamServer(chunks) as srv:
        record = ask(srv.port, "openai", 8, timeout_s=20)
    assert not record.ok and record.error_kind == "protocol", record.error
    assert record.ttft_s is not None and len(record.itl_s) <= 8 - 1, len(record.itl_s)
