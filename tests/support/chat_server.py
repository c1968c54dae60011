"""An OpenAI chat endpoint shaped exactly as SGLang 0.5.23 answers it, on 127.0.0.1 (port 0), for
the client's parsing tests: it records every request body and answers

* complete: ``{id, object: "chat.completion", choices: [{index, message: {role, content}, finish_reason}],
  usage, sglext: {spec_tokens_details: {...}}}`` (``serving_chat.py`` _build_chat_response: sglext at
  the response level, only when asked for and speculating);
* streamed: a first chunk with the ``role`` delta, content chunks (usage on each with
  ``continuous_usage_stats``), the finish chunk, one chunk with ``choices: []`` and ``sglext``, the
  usage chunk (``include_usage``), ``data: [DONE]`` (``serving_chat.py`` _generate_chat_stream).

``verify_every``: tokens per verify step (0: a server without speculation, no sglext at all).
``think_tokens``: a server launched with ``--reasoning-parser``: the answer's first that many tokens
are the model's reasoning, sent as ``reasoning_content`` (complete: ``message.reasoning_content`` and
``content: ""`` when nothing follows, ``serving_chat.py`` lines 2944 and 2994-3004; streamed:
``delta.reasoning_content`` chunks, usage on each with ``continuous_usage_stats``, lines 975-1001).
"""

from __future__ import annotations

import asyncio
import json
import threading
import uuid

from aiohttp import web


class FakeChatSGLang:
    def __init__(self, *, verify_every: int = 2, chunk_tokens: int = 2, token_s: float = 0.0005,
                 think_tokens: int = 0):
        self.verify_every, self.chunk_tokens, self.token_s = verify_every, chunk_tokens, token_s
        self.think_tokens = think_tokens
        self.bodies: list[dict] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self):
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=10)
        return self

    def __exit__(self, *exc):
        try:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()

    async def _start(self):
        async def info(request):
            return web.json_response({"version": "0.5.23", "model_path": "fake/model",
                                      "served_model_name": "fake-chat"})

        async def text(request):
            return web.Response(text="ok")

        async def models(request):
            return web.json_response({"object": "list", "data": []})

        app = web.Application()
        app.router.add_get("/server_info", info)
        app.router.add_post("/flush_cache", text)
        app.router.add_get("/health", text)
        app.router.add_get("/v1/models", models)
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]

    def _details(self, tokens: int) -> dict | None:
        if not self.verify_every:
            return None
        verify = -(-tokens // self.verify_every)
        return {"spec_accept_rate": 0.5, "spec_accept_length": tokens / verify, "spec_cap_length": 0.0,
                "spec_block_accept_length": 0.0, "spec_num_correct_drafts": tokens - verify,
                "spec_num_proposed_drafts": 3 * verify, "spec_verify_ct": verify,
                "spec_correct_drafts_histogram": [], "spec_cap_lens_histogram": []}

    def _text(self, body: dict, n: int) -> str:
        last = body["messages"][-1]["content"]
        return ("echo " + last)[: 4 * n].ljust(4 * n, ".")

    async def _chat(self, request):
        body = await request.json()
        self.bodies.append(body)
        n = body.get("max_completion_tokens") or body.get("max_tokens") or 16
        usage = {"prompt_tokens": 7, "completion_tokens": n, "total_tokens": n + 7,
                 "prompt_tokens_details": None, "reasoning_tokens": 0}
        details = self._details(n) if body.get("return_spec_tokens_details") else None
        text = self._text(body, n)
        think = 4 * min(self.think_tokens, n)  # characters of reasoning: 4 a token
        # the id is the request's rid, or a uuid4 hex without one (serving_chat.py chunk_id, io_struct.py)
        base = {"id": body.get("rid") or uuid.uuid4().hex, "created": 1,
                "model": body.get("model", "default")}
        if not body.get("stream"):
            await asyncio.sleep(n * self.token_s)
            out = {**base, "object": "chat.completion", "usage": usage, "metadata": None,
                   "choices": [{"index": 0, "message": {"role": "assistant", "content": text[think:],
                                                        "reasoning_content": text[:think] or None,
                                                        "tool_calls": None},
                                "logprobs": None, "finish_reason": "length", "matched_stop": None}]}
            if details:
                out["sglext"] = {"spec_tokens_details": details}
            return web.json_response(out)
        opts = body.get("stream_options") or {}
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)

        async def send(chunk: dict) -> None:
            await resp.write(f"data: {json.dumps({**base, 'object': 'chat.completion.chunk', **chunk})}\n\n".encode())

        await send({"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}, "logprobs": None,
                                 "finish_reason": None}], "usage": None})
        done = 0
        while done < n:
            step = min(self.chunk_tokens, n - done)
            await asyncio.sleep(step * self.token_s)
            piece = text[4 * done: 4 * (done + step)]
            done += step
            running = {**usage, "completion_tokens": done, "total_tokens": done + 7} \
                if opts.get("continuous_usage_stats") else None
            field = "reasoning_content" if done <= self.think_tokens else "content"
            if field == "content" and done - step < self.think_tokens:  # the reasoning ends inside
                cut = 4 * self.think_tokens - 4 * (done - step)
                await send({"choices": [{"index": 0, "delta": {"reasoning_content": piece[:cut]},
                                         "logprobs": None, "finish_reason": None}], "usage": running})
                piece = piece[cut:]
            await send({"choices": [{"index": 0, "delta": {field: piece}, "logprobs": None,
                                     "finish_reason": None}], "usage": running})
        await send({"choices": [{"index": 0, "delta": {}, "logprobs": None, "finish_reason": "length",
                                 "matched_stop": None}], "usage": None})
        if details:
            await send({"choices": [], "sglext": {"spec_tokens_details": details}})
        if opts.get("include_usage"):
            await send({"choices": [], "usage": usage})
        await resp.write(b"data: [DONE]\n\n")
        return resp
