"""The text of a streamed ``/generate`` answer (tuner/bench/client.py): SGLang sends the whole text so
far in each chunk, or only the new text under ``--incremental-streaming-output`` (said in
``/server_info``); either way the record keeps the answer's text once, for the lossless check."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web

from tuner.bench import RequestRecord
from tuner.bench.client import BenchClient


async def _stream(incremental: bool) -> RequestRecord:
    words = ["The", " sea", " is", " calm"]
    pieces = words if incremental else ["".join(words[:i + 1]) for i in range(len(words))]

    async def info(request):
        return web.json_response({"model_path": "org/model", "incremental_streaming_output": incremental})

    async def generate(request):
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for i, piece in enumerate(pieces):
            last = i == len(pieces) - 1
            meta = {"completion_tokens": i + 1, "prompt_tokens": 3, "e2e_latency": 0.001,
                    "finish_reason": {"type": "length", "length": 4} if last else None}
            await resp.write(b"data: " + json.dumps({"text": piece, "meta_info": meta}).encode() + b"\n\n")
        await resp.write(b"data: [DONE]\n\n")
        return resp

    app = web.Application()
    app.router.add_get("/server_info", info)
    app.router.add_post("/generate", generate)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        async with BenchClient(f"http://127.0.0.1:{runner.addresses[0][1]}", stream=True) as client:
            await client.server_info()
            return await client.request(RequestRecord("single", "p", 4), "hello")
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("incremental", [False, True], ids=["cumulative", "incremental"])
def test_a_streamed_answer_s_text_is_kept_once(incremental):
    r = asyncio.run(_stream(incremental))
    assert r.ok, r.error
    assert r.output_text == "The sea is calm" and r.completion_tokens == 4
