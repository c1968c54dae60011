"""A stand-in SGLang 0.5.23 server on 127.0.0.1 that counts prompts as a tokenizer would (its
characters // a divisor), honest with one divisor, a round-robin router over two tokenizers with two:
:class:`Router`, for the checks that one prompt is counted alike (tuner.bench.client, bench --compare,
a study's baseline)."""

from __future__ import annotations

import itertools
import json

from aiohttp import web
from support.loop_thread import LoopThread

SUITE = {"name": "two", "warmup": {"requests": 1, "max_tokens": 4}, "single": {"lengths": [8, 16], "repeats": 2},
         "sweep": {"concurrencies": [2], "max_tokens": 8},
         "prompts": [{"name": "fib", "text": "Write a Python function that returns the n-th Fibonacci number."},
                     {"name": "haiku", "text": "Write a haiku about autumn leaves on a quiet pond."}]}


class Router:
    """``/generate`` and ``/v1/chat/completions`` as SGLang 0.5.23 answers them, the prompt counted as
    its characters // ``divisors[k]``, k taking turns per request (one divisor: one honest server; two: a
    round-robin router over two tokenizers). ``stream_counts``: a chat stream whose chunks say these
    prompt counts in turn. ``cached_tokens`` grows with each answer to a prompt, as SGLang's radix cache
    does after the first."""

    def __init__(self, divisors=(4,), stream_counts=None):
        self.turn = itertools.cycle(divisors)
        self.stream_counts = stream_counts
        self.seen: dict[str, int] = {}

    def _counts(self, prompt: str) -> tuple[int, int]:
        cached = self.seen.get(prompt, 0)
        tokens = len(prompt) // next(self.turn)
        self.seen[prompt] = tokens
        return tokens, cached

    async def generate(self, request):
        body = await request.json()
        n = body["sampling_params"]["max_new_tokens"]
        tokens, cached = self._counts(body["text"])
        return web.json_response({"text": "w" * n, "meta_info": {
            "id": body["rid"], "prompt_tokens": tokens, "cached_tokens": cached, "completion_tokens": n,
            "e2e_latency": 0.001, "finish_reason": {"type": "length", "length": n}}})

    async def chat(self, request):
        body = await request.json()
        n, rid = body["max_completion_tokens"], body["rid"]
        tokens, _ = self._counts(json.dumps(body["messages"]))
        counts = self.stream_counts or [tokens]
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)

        async def send(choices, usage=None):
            chunk = {"id": rid, "object": "chat.completion.chunk", "model": body["model"], "choices": choices,
                     "usage": usage}
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())

        def usage(i: int) -> dict:
            p = counts[min(i, len(counts) - 1)]
            return {"prompt_tokens": p, "completion_tokens": i, "total_tokens": p + i}

        await send([{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        for i in range(1, n + 1):  # a reasoning model's thinking first, then its answer
            delta = {"reasoning_content": f"t{i} "} if i <= n // 2 else {"content": f"w{i} "}
            await send([{"index": 0, "delta": delta, "finish_reason": None}], usage(i))
        await send([{"index": 0, "delta": {}, "finish_reason": "length"}])
        await send([], usage(n))
        await resp.write(b"data: [DONE]\n\n")
        await resp.write_eof()
        return resp

    def __enter__(self):
        async def info(request):
            return web.json_response({"version": "0.5.23", "model_path": "moonshotai/Kimi-K2.6",
                                      "speculative_algorithm": None})

        async def ok(request):
            return web.Response(text="ok")

        async def models(request):
            return web.json_response({"data": []})

        async def start():
            app = web.Application()
            app.router.add_get("/server_info", info)
            app.router.add_post("/flush_cache", ok)
            app.router.add_get("/v1/models", models)
            app.router.add_get("/health", ok)
            app.router.add_post("/generate", self.generate)
            app.router.add_post("/v1/chat/completions", self.chat)
            self.runner = web.AppRunner(app, shutdown_timeout=0.1)
            await self.runner.setup()
            site = web.TCPSite(self.runner, "127.0.0.1", 0)
            await site.start()
            return site._server.sockets[0].getsockname()[1]

        self.loop = LoopThread()
        self.url = f"http://127.0.0.1:{self.loop.run(start())}"
        return self

    def __exit__(self, *exc):
        try:
            self.loop.run(self.runner.cleanup())
        finally:
            self.loop.close()
