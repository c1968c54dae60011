"""Answers at the edges of what the bench client accepts (tuner/bench/client.py): a count of 0 is a
count (a speculative server's one-token answer ran no verify step), and an OpenAI error object sent
with HTTP 200 fails the request quoting the server, as SGLang's ``{"error": ...}`` does."""

from __future__ import annotations

import asyncio

from aiohttp import web

from tuner.bench import RequestRecord
from tuner.bench.client import BenchClient


async def _ask(api: str, answer: dict) -> RequestRecord:
    async def reply(request):
        return web.json_response(answer)

    app = web.Application()
    app.router.add_post("/generate", reply)
    app.router.add_post("/v1/completions", reply)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    try:
        async with BenchClient(f"http://127.0.0.1:{runner.addresses[0][1]}", api=api) as client:
            return await client.request(RequestRecord("single", "p", 1), "hello")
    finally:
        await runner.cleanup()


def test_a_one_token_answer_with_no_verify_step_is_measured():
    # the first token comes from the prefill: a speculative server reports spec_verify_ct 0 for it
    meta = {"completion_tokens": 1, "prompt_tokens": 3, "finish_reason": {"type": "length", "length": 1},
            "e2e_latency": 0.001, "spec_verify_ct": 0, "spec_accept_length": 1.0}
    r = asyncio.run(_ask("generate", {"text": "x", "meta_info": meta}))
    assert r.ok, r.error
    assert (r.completion_tokens, r.spec_verify_ct, r.accept_length) == (1, 0, 1.0)


def test_an_openai_error_object_with_http_200_fails_the_request_quoting_it():
    r = asyncio.run(_ask("openai", {"object": "error", "message": "The engine is overloaded", "code": 503}))
    assert not r.ok and r.http_status == 200 and r.error_kind == "protocol"
    assert "The engine is overloaded" in r.error
