"""The bench client never sends a request on a keep-alive connection SGLang may be closing.

SGLang 0.5.23's HTTP server closes a connection idle for ``SGLANG_TIMEOUT_KEEP_ALIVE`` seconds (5 by
default: ``srt/environ.py``; ``entrypoints/http_server.py`` ``launch_server``, uvicorn's
``timeout_keep_alive``). A request that reaches it as it closes is never read, and aiohttp does not send a
POST again (only idempotent methods). The server here does that every time, not only in the moment of
the race: a request on a connection idle longer than ``CLOSES_AFTER_S`` is dropped unanswered. The
client's pool must have let such a connection go (``tuner.bench.client.POOL_IDLE_S``, shortened here as
the server's limit is, so the test idles well under a second).
"""

from __future__ import annotations

import asyncio

from aiohttp import web
from aiohttp.test_utils import TestServer

import tuner.bench.client as client_module
from tuner.bench.client import BenchClient
from tuner.bench.records import RequestRecord

CLOSES_AFTER_S = 0.3  #: the test server's keep-alive limit (SGLang's is 5 s)
POOL_IDLE_S = 0.1  #: the client's, below it as the shipped 3 s is below SGLang's 5 s
TOKENS = 4


async def _two_requests_apart() -> tuple[RequestRecord, RequestRecord, int]:
    loop = asyncio.get_running_loop()
    last_answer: dict = {}  # connection (transport) -> loop time of its last answer
    dropped = []

    async def generate(request):
        body = await request.json()
        transport = request.transport
        since = last_answer.get(transport)
        if since is not None and loop.time() - since > CLOSES_AFTER_S:
            dropped.append(body["rid"])
            transport.close()  # SGLang's close crossing the request: never read, never answered
            return web.Response()
        last_answer[transport] = loop.time()
        return web.json_response({"text": "abcd", "output_ids": [1, 2, 3, 4], "meta_info": {
            "id": body["rid"], "finish_reason": {"type": "length", "length": TOKENS}, "prompt_tokens": 5,
            "completion_tokens": TOKENS, "cached_tokens": 0, "e2e_latency": 0.001}})

    app = web.Application()
    app.router.add_post("/generate", generate)
    async with TestServer(app, host="127.0.0.1") as server:  # a free port on loopback
        async with BenchClient(str(server.make_url("")), timeout_s=30.0) as client:
            first = await client.request(RequestRecord("single", "p", TOKENS), "hello")
            # the idle time is what is tested, not a wait for something to happen
            await asyncio.sleep(CLOSES_AFTER_S * 1.5)
            second = await client.request(RequestRecord("single", "p", TOKENS, repeat=1), "hello")
    return first, second, len(dropped)


def test_a_request_after_an_idle_spell_goes_on_a_fresh_connection(monkeypatch):
    monkeypatch.setattr(client_module, "POOL_IDLE_S", POOL_IDLE_S)
    first, second, dropped = asyncio.run(_two_requests_apart())
    assert first.ok, first.error
    assert second.ok, f"{second.error_kind}: {second.error}"
    assert second.completion_tokens == TOKENS and dropped == 0


def test_the_client_lets_go_of_a_connection_before_sglang_closes_it():
    from tuner.sim.server import SGLANG_KEEP_ALIVE_DEFAULT_S

    assert 0 < client_module.POOL_IDLE_S < SGLANG_KEEP_ALIVE_DEFAULT_S
