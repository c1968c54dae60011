"""A server that sends a second answer to one request, on a keep-alive connection (127.0.0.1, raw bytes
from an asyncio server in a thread): aiohttp reads that answer as the next request's on the connection.
The client names each request (``rid``) and SGLang 0.5.23 names it back in every answer, so the stale
answer fails the request it reached (``protocol``) instead of being measured, and the connection goes
with it, so the requests after it get their own answers (QA: request 3 got request 2's in 1.6 ms)."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from test_unforeseen_lies import LyingServer

from tuner.bench.client import BenchClient
from tuner.bench.records import RequestRecord


def _answer(api: str, stream: bool, rid: str | None, text: str) -> bytes:
    """An HTTP response as SGLang 0.5.23 shapes it, naming ``rid`` (no ``id`` for None), with its length
    (keep-alive)."""
    named = {"id": rid} if rid else {}
    if api == "generate":
        meta = {**named, "prompt_tokens": 5, "completion_tokens": 4,
                "finish_reason": {"type": "length", "length": 4}}  # no e2e_latency: no latency check
        chunks = [{"text": text, "meta_info": meta}]
    else:
        usage = {"prompt_tokens": 5, "completion_tokens": 4, "total_tokens": 9}
        part = {"message" if not stream else "delta": {"role": "assistant", "content": text}} \
            if api == "chat" else {"text": text}
        chunks = [{**named, "model": "default", "usage": usage,
                   "choices": [{"index": 0, **part, "finish_reason": "length"}]}]
    if not stream:
        body, kind = json.dumps(chunks[0]).encode(), b"application/json"
    else:
        lines = b"".join(b"data: %s\n\n" % json.dumps(c).encode() for c in chunks)
        body, kind = lines + b"data: [DONE]\n\n", b"text/event-stream"
    return b"HTTP/1.1 200 OK\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n" % (kind, len(body)) + body


class RepeatingServer(LyingServer):
    """Answers each request on a kept-alive connection as SGLang names it (the body's ``rid``, or a uuid4
    hex; no id at all unless ``named``; ids of its own, never the request's, when ``named="own"``), but
    answers the second request with the first one's answer again, and sends the second's own only when the next request comes on that connection (never, once
    the client closes it: nothing left to chance). ``with`` starts and stops it (:class:`LyingServer`)."""

    def __init__(self, api: str, stream: bool, named: bool | str = True):
        super().__init__(answer=None)
        self.api, self.stream, self.named = api, stream, named
        self.first: bytes | None = None  #: the first answer, until it has been sent again
        self.rids: list[str] = []  #: each request's id, in the order they came
        self.connections = 0

    async def _handle(self, reader, writer):
        self.connections += 1
        held = b""  #: this connection's answer held back behind the stale one, until the next request on it
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                              if line.lower().startswith(b"content-length:"))
                body = json.loads(await reader.readexactly(length))
                rid = body.get("rid") or uuid.uuid4().hex  # io_struct.py _normalize_single_inputs
                self.rids.append(rid)
                named = uuid.uuid4().hex if self.named == "own" else rid if self.named else None
                answer = _answer(self.api, self.stream, named, f"answer to {rid}")
                if self.first is None:
                    self.first, out = answer, answer
                elif self.first:  # the second answer to the first request; this one's comes later
                    out, held, self.first = self.first, answer, b""
                else:
                    out, held = held + answer, b""
                writer.write(out)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass  # the client closed the connection
        finally:
            writer.close()


@pytest.mark.parametrize("api,stream", [("generate", False), ("generate", True), ("openai", False),
                                        ("openai", True), ("chat", False), ("chat", True)])
def test_a_second_answer_to_one_request_fails_the_next_not_the_rest(api, stream):
    async def three(url):
        async with BenchClient(url, api=api, stream=stream, timeout_s=60) as client:
            # one after the other: each reuses the kept-alive connection
            return [await client.request(RequestRecord("single", "p", 4), "hello") for _ in range(3)]

    with RepeatingServer(api, stream) as srv:
        first, second, third = asyncio.run(three(srv.url))
    rids = srv.rids
    assert len(set(rids)) == 3
    assert first.ok and first.output_text == f"answer to {rids[0]}", first
    assert not second.ok and second.error_kind == "protocol", second
    assert f"the answer is for request '{rids[0]}', not the '{rids[1]}' sent" in second.error, second
    # its connection was closed, so its own answer, still on it, reached no other request
    assert third.ok and third.output_text == f"answer to {rids[2]}", third
    assert srv.connections == 2


@pytest.mark.parametrize("api,stream", [("generate", True), ("openai", False), ("chat", True)])
def test_an_answer_that_names_no_request_is_not_judged(api, stream):
    """A server that names no request (not SGLang) is measured as before: the id is judged only when sent."""
    async def one(url):
        async with BenchClient(url, api=api, stream=stream, timeout_s=60) as client:
            return await client.request(RequestRecord("single", "p", 4), "hello")

    with RepeatingServer(api, stream, named=False) as srv:
        record = asyncio.run(one(srv.url))
    assert record.ok and record.output_text == f"answer to {srv.rids[0]}", record


@pytest.mark.parametrize("api,stream", [("generate", False), ("openai", True), ("chat", False)])
def test_a_server_that_names_ids_of_its_own_is_not_judged(api, stream):
    """A server that takes no ``rid`` and names ids of its own (another release, another server):
    nothing tells its answers apart, so none is judged, rather than every request failing."""
    async def two(url):
        async with BenchClient(url, api=api, stream=stream, timeout_s=60) as client:
            return [await client.request(RequestRecord("single", "p", 4), "hello") for _ in range(2)]

    with RepeatingServer(api, stream, named="own") as srv:
        first, second = asyncio.run(two(srv.url))
    assert first.ok and first.output_text == f"answer to {srv.rids[0]}", first
    assert second.ok, second  # request 1's answer again: measured, as before the ids (nothing to judge by)
