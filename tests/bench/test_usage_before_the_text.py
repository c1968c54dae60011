"""An OpenAI stream (``/v1/completions``, ``/v1/chat/completions``) whose usage chunk (no choice) comes
before its text (raw HTTP on 127.0.0.1, through ``BenchClient.request``): SGLang 0.5.23 sends its
choice-less chunks (``sglext``, the final usage) after every output's chunk, the finish reason's
included, so one before it counts tokens no text came with yet. The client read the time to the first
token at it (QA: the final usage sent first, then the text a token every 10 ms: TTFT 1 ms, measured);
now the request fails as ``protocol``."""

from __future__ import annotations

import asyncio

import pytest
from support.raw_server import SseServer

from tuner.bench.client import BenchClient
from tuner.bench.records import RequestRecord

GAP_S = 0.05  #: between two chunks: the first token comes this long after the stream starts, or more


def StreamServer(chunks: list) -> SseServer:
    return SseServer(chunks, GAP_S)


def usage(n: int) -> dict:
    return {"prompt_tokens": 5, "completion_tokens": n, "total_tokens": 5 + n}


def text_chunk(text: str, n: int | None, reason: str | None = None) -> dict:
    """A completions chunk; :func:`as_chat` turns it into chat's."""
    chunk = {"object": "text_completion", "model": "default",
             "choices": [{"index": 0, "text": text, "finish_reason": reason}]}
    return chunk if n is None else {**chunk, "usage": usage(n)}


def usage_chunk(n: int) -> dict:
    return {"object": "text_completion", "model": "default", "choices": [], "usage": usage(n)}


def as_chat(chunks: list) -> list:
    """The same stream as chat sends it (serving_chat.py): ``delta`` for ``text``, and each finish reason
    in a chunk of its own after the text."""
    out = []
    for c in chunks:
        if isinstance(c, str) or not c["choices"]:
            out.append(c)
            continue
        choice = c["choices"][0]
        out.append({**c, "object": "chat.completion.chunk",
                    "choices": [{"index": 0, "delta": {"content": choice["text"]}, "finish_reason": None}]})
        if choice["finish_reason"]:
            out.append({"object": "chat.completion.chunk", "model": "default",
                        "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
    return out


def ask(url: str, api: str) -> RequestRecord:
    async def go():
        async with BenchClient(url, api=api, stream=True, timeout_s=60) as client:
            return await client.request(RequestRecord(phase="single", prompt="p", max_tokens=4), "hello")
    return asyncio.run(go())


@pytest.mark.parametrize("chunks", [
    # the final usage first, then text chunks that say no count (a server ignoring continuous_usage_stats)
    [usage_chunk(4), text_chunk("a", None), text_chunk("b", None), text_chunk("c", None),
     text_chunk("d", None, "length"), "[DONE]"],
    # a usage chunk between the text chunks, ahead of them
    [text_chunk("a", None), usage_chunk(4), text_chunk("b", None), text_chunk("c", None),
     text_chunk("d", None, "length"), "[DONE]"],
])
@pytest.mark.parametrize("api", ["openai", "chat"])
def test_a_usage_chunk_before_the_text_fails_the_request(chunks, api):
    with StreamServer(chunks if api == "openai" else as_chat(chunks)) as srv:
        record = ask(srv.url, api)
    assert not record.ok and record.error_kind == "protocol", record
    assert "a chunk without a choice said completion_tokens 4 before the finish reason" in record.error, \
        record.error


@pytest.mark.parametrize("chunks", [
    # SGLang with continuous_usage_stats: every text chunk counts, the final usage after the finish
    [text_chunk("a", 1), text_chunk("b", 2), text_chunk("c", 3), text_chunk("d", 4, "length"),
     usage_chunk(4), "[DONE]"],
    # a server ignoring continuous_usage_stats: the count only in the final usage, after the finish
    [text_chunk("a", None), text_chunk("b", None), text_chunk("c", None), text_chunk("d", None, "length"),
     usage_chunk(4), "[DONE]"],
])
@pytest.mark.parametrize("api", ["openai", "chat"])
def test_usage_after_the_text_is_measured_with_its_first_tokens_time(chunks, api):
    with StreamServer(chunks if api == "openai" else as_chat(chunks)) as srv:
        record = ask(srv.url, api)
    assert record.ok, record.error
    assert record.completion_tokens == 4 and record.output_text == "abcd"


@pytest.mark.parametrize("api", ["openai", "chat"])
def test_a_count_of_none_yet_before_the_text_leaves_the_first_token_at_the_text(api):
    # the choice-less chunk of 0 tokens is no token: the first comes with the text, a gap later
    chunks = [usage_chunk(0), text_chunk("a", 1), text_chunk("b", 2), text_chunk("c", 3),
              text_chunk("d", 4, "length"), usage_chunk(4), "[DONE]"]
    with StreamServer(chunks if api == "openai" else as_chat(chunks)) as srv:
        record = ask(srv.url, api)
    assert record.ok, record.error
    assert record.ttft_s >= GAP_S * 0.9, record.ttft_s
