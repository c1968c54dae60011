"""A stream that sends one chunk twice: where each chunk carries new text alone (OpenAI
``/v1/completions``, ``/generate`` under ``--incremental-streaming-output``), the repeated text joined
the answer kept for the lossless check (QA: ``' w0 w1 w2 w2 w3 ...'``, 17 words for 16 tokens, exit 0),
though its count said no new token. SGLang yields output only with new tokens, so new text beside an
unchanged count fails the request (``protocol``). The ``/generate`` text so far, sent twice, is
harmless (the same text, no new token) and stays an answer. Raw bytes on a real socket (127.0.0.1)."""

from __future__ import annotations

import asyncio

from test_unforeseen_lies import LyingServer, event_stream

from tuner.bench.client import BenchClient
from tuner.bench.records import RequestRecord

RID = "r"  # the id the answers name: not judged until a server names a request's own id back


def completion(i: int, text: str, finish: str | None = None) -> dict:
    return {"id": RID, "choices": [{"index": 0, "text": text, "finish_reason": finish}],
            "usage": {"prompt_tokens": 3, "completion_tokens": i, "total_tokens": i + 3}}


def generated(i: int, text: str, finish: bool = False) -> dict:
    return {"text": text, "meta_info": {"completion_tokens": i, "prompt_tokens": 3,
                                        "finish_reason": {"type": "length", "length": 4} if finish else None}}


def ask(url: str, api: str, incremental: bool = False) -> RequestRecord:
    async def go():
        async with BenchClient(url, api=api, stream=True, timeout_s=60) as client:
            client.incremental_stream = incremental  # as /server_info's incremental_streaming_output says
            return await client.request(RequestRecord(phase="single", prompt="p", max_tokens=4), "hello")
    return asyncio.run(go())


def test_a_completions_chunk_sent_twice_fails_the_request():
    chunks = [completion(1, " a"), completion(2, " b"), completion(2, " b"), completion(3, " c"),
              completion(4, " d", "length"), "[DONE]"]
    with LyingServer(lambda path: event_stream(chunks)) as srv:
        record = ask(srv.url, "openai")
    assert not record.ok and record.error_kind == "protocol", record
    assert "the stream sent text 'b' without a new token (completion_tokens stayed 2)" in record.error, record.error


def test_an_honest_completions_stream_with_empty_and_multi_token_chunks_is_an_answer():
    # a chunk of no text (a partial character held back) and one of two tokens: honest
    chunks = [completion(1, " a"), completion(2, ""), completion(4, " b c", "length"), "[DONE]"]
    with LyingServer(lambda path: event_stream(chunks)) as srv:
        record = ask(srv.url, "openai")
    assert record.ok and record.output_text == " a b c" and record.completion_tokens == 4, record


def test_an_incremental_generate_chunk_sent_twice_fails_the_request():
    chunks = [generated(1, "a"), generated(2, "b"), generated(2, "b"), generated(4, "cd", True), "[DONE]"]
    with LyingServer(lambda path: event_stream(chunks)) as srv:
        record = ask(srv.url, "generate", incremental=True)
    assert not record.ok and record.error_kind == "protocol", record
    assert "without a new token (completion_tokens stayed 2)" in record.error, record.error


def test_the_generate_text_so_far_sent_twice_is_harmless():
    chunks = [generated(1, "a"), generated(2, "ab"), generated(2, "ab"), generated(4, "abcd", True), "[DONE]"]
    with LyingServer(lambda path: event_stream(chunks)) as srv:
        record = ask(srv.url, "generate")
    assert record.ok and record.output_text == "abcd" and record.completion_tokens == 4, record
