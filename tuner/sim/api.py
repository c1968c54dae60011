"""The simulated server's HTTP API: SGLang 0.5.x's routes, field names and status codes.

Routes (``srt/entrypoints/http_server.py`` unless noted): ``POST /generate``, ``POST
/v1/completions`` and ``/v1/chat/completions`` (``srt/entrypoints/openai/``), ``GET /v1/models``,
``GET /health`` and ``/health_generate`` (503 until loaded), ``GET /server_info`` and
``/get_server_info``, ``GET /get_model_info`` and ``/model_info``, ``GET|POST /flush_cache`` (400
unless idle), ``GET /metrics`` (Prometheus text, with ``--enable-metrics``).

:class:`SimService` owns the :class:`~tuner.sim.scheduler.BatchEngine` and the request counter
that ``--sim-crash-after-requests`` watches; it is used from one event loop only.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import time
import uuid

from aiohttp import web

from . import text as synth
from .args import SGLANG_VERSION, LaunchPlan
from .requests import BadRequest, GenSpec, parse_chat, parse_completion, parse_generate
from .scheduler import BatchEngine, Progress, SimRequest

log = logging.getLogger("tuner.sim")

#: /flush_cache answers, word for word (http_server.py, flush_cache).
FLUSH_OK = ("Cache flushed.\nPlease check backend logs for more details. "
            "(When there are running or waiting requests, the operation will not be performed.)\n")
FLUSH_FAILED = "Flush cache failed.\n"
SIM_VERSION = f"{SGLANG_VERSION}+sim"


def _error(status: int, message: str) -> web.Response:
    # http_server.py, _create_error_response: {"error": {"message": str(e)}}.
    return web.json_response({"error": {"message": message}}, status=status)


class SimService:
    """State shared by the routes: launch plan, performance model, engine, readiness, counters."""

    def __init__(self, plan: LaunchPlan, model, *, profile_name: str, speedup: float, seed: int,
                 crash_after_requests: int | None = None):
        self.plan, self.model = plan, model
        self.profile_name, self.speedup = profile_name, speedup
        self.crash_after = crash_after_requests
        args = plan.server_args
        self.engine = BatchEngine(
            model, spec=plan.spec, max_running_requests=plan.max_running_requests, speedup=speedup,
            seed=seed, stream_interval=args["stream_interval"],
            cuda_graph_max_bs=args.get("cuda_graph_max_bs_decode"),
        )
        self.max_running_requests = plan.max_running_requests  #: effective batch cap
        self.ready = False
        self.accepted = 0  #: generate requests accepted (health checks excluded)
        self.startup_time = time.time()
        self.model_name = args["served_model_name"]
        self._salt = 0
        self._facts: dict[int, tuple[int, float]] = {}
        self._replies = synth.Continuations()

    def set_max_running_requests(self, value: int) -> None:
        """The cap SGLang derives from memory when none is given and decoding is autoregressive."""
        self.max_running_requests = value
        self.engine.max_running = value

    # ---------------------------------------------------------------- app
    def build_app(self) -> web.Application:
        app = web.Application(client_max_size=64 << 20)
        r = app.router
        r.add_post("/generate", self.generate)
        r.add_put("/generate", self.generate)
        r.add_post("/v1/completions", self.completions)
        r.add_post("/v1/chat/completions", self.chat_completions)
        r.add_get("/v1/models", self.models)
        r.add_get("/health", self.health)
        r.add_get("/health_generate", self.health_generate)
        r.add_get("/server_info", self.server_info)
        r.add_get("/get_server_info", self.server_info)
        r.add_get("/model_info", self.model_info)
        r.add_get("/get_model_info", self.model_info)
        r.add_route("GET", "/flush_cache", self.flush_cache)
        r.add_route("POST", "/flush_cache", self.flush_cache)
        if self.plan.server_args.get("enable_metrics"):
            r.add_get("/metrics", self.metrics)
        return app

    # ---------------------------------------------------------------- generation core
    def _count_accepted(self) -> None:
        self.accepted += 1
        if self.crash_after is not None and self.accepted >= self.crash_after:
            # The request is in flight (accepted, unanswered) when the process dies.
            asyncio.get_running_loop().call_soon(self._crash)

    def _crash(self) -> None:
        log.error("Scheduler hit an exception: Traceback (most recent call last):\n"
                  '  File "tuner/sim/scheduler.py", in run\n'
                  "RuntimeError: CUDA error: an illegal memory access was encountered "
                  f"(simulated by --sim-crash-after-requests {self.crash_after})")
        for stream in (sys.stderr, sys.stdout):
            stream.flush()
        os._exit(1)

    def _runtime_failure(self, spec: GenSpec) -> str | None:
        """SGLang's error for a request that reaches a verify step with a broken draft tree."""
        v = self.plan.runtime_violation
        if v is None or spec.max_new_tokens <= 1:  # the first token comes from prefill
            return None
        message = f"{v.sglang_exception}: {v.sglang_message}"
        log.error("Scheduler hit an exception: Traceback (most recent call last):\n"
                  '  File "sglang/srt/speculative/eagle_utils.py", in organize_draft_results\n'
                  f"{message}")
        return message

    def _prompt_facts(self, key: int, spec: GenSpec) -> tuple[int, float]:
        """(prompt tokens, predictability), cached: a benchmark repeats a few prompts many times, and
        every microsecond spent per request delays the next arrival."""
        facts = self._facts.get(key)
        if facts is None:
            if spec.text is not None:
                # A chat request drafts like its messages' content, not like the template around it.
                facts = (self.model.prompt_tokens(spec.text),
                         self.model.predictability(spec.acceptance_text or spec.text))
            else:
                text = synth.detokenize(spec.input_ids)
                facts = (len(spec.input_ids), self.model.predictability(text))
            if len(self._facts) > 4096:
                self._facts.clear()
            self._facts[key] = facts
        return facts

    def _submit(self, spec: GenSpec, rid: str | None, stream: bool) -> tuple[SimRequest, int, int]:
        key = synth.prompt_key(spec.text, spec.input_ids)
        prompt_tokens, predictability = self._prompt_facts(key, spec)
        salt = 0
        if not spec.greedy:  # sampling: a different continuation per request
            self._salt += 1
            salt = self._salt
        req = SimRequest(rid=rid or uuid.uuid4().hex, prompt_tokens=prompt_tokens,
                         max_new_tokens=spec.max_new_tokens,
                         predictability=predictability, stream=stream)
        return self.engine.submit(req), key, salt

    def _meta(self, req: SimRequest, progress: Progress, t0: float) -> dict:
        n, finished = progress.generated, progress.finished
        meta = {
            "id": req.rid,
            "finish_reason": {"type": "length", "length": n} if finished else None,
            "prompt_tokens": req.prompt_tokens,
            "weight_version": "default",
            "num_retractions": 0,
            "reasoning_tokens": 0,
            "completion_tokens": n,
            "cached_tokens": 0,
            "e2e_latency": time.perf_counter() - t0,
        }
        verify_ct, correct = progress.verify_ct, progress.correct_drafts
        if self.plan.speculative and verify_ct > 0:
            # tokenizer_manager.py: accept length counts the bonus token, accept rate does not.
            proposed = verify_ct * (self.plan.spec.num_draft_tokens - 1)
            meta.update({
                "spec_accept_rate": correct / proposed if proposed else 0.0,
                "spec_accept_length": n / verify_ct,
                "spec_num_correct_drafts": correct,
                "spec_num_proposed_drafts": proposed,
                "spec_verify_ct": verify_ct,
            })
        return meta

    async def _run_one(self, spec: GenSpec, rid: str | None) -> tuple[SimRequest, list[int], str, float]:
        t0 = time.perf_counter()
        req, key, salt = self._submit(spec, rid, stream=False)
        await req.done
        return (req, *self._replies.reply(key, req.generated, salt), t0)

    async def _stream_one(self, spec: GenSpec, rid: str | None):
        """Yields (req, progress, new_ids, all_ids, t0) as chunks become due."""
        t0 = time.perf_counter()
        req, key, salt = self._submit(spec, rid, stream=True)
        ids: list[int] = []
        try:
            while True:
                progress = await req.chunks.get()
                new = synth.output_ids(key, len(ids), progress.generated, salt)
                ids += new
                yield req, progress, new, ids, t0
                if progress.finished:
                    return
        finally:
            if not req.done.done():
                self.engine.abort(req)

    def _not_ready(self) -> web.Response | None:
        return None if self.ready else _error(503, "The server is not ready yet (model loading).")

    async def _json_body(self, request: web.Request):
        try:
            return await request.json()
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise BadRequest("request body is not valid JSON") from None

    # ---------------------------------------------------------------- /generate
    async def generate(self, request: web.Request) -> web.StreamResponse:
        if (resp := self._not_ready()) is not None:
            return resp
        try:
            specs, batch, stream, rid = parse_generate(await self._json_body(request))
        except BadRequest as exc:
            return _error(400, str(exc))
        for _ in specs:
            self._count_accepted()
        for spec in specs:
            if (failure := self._runtime_failure(spec)) is not None:
                return _error(500, failure)
        if stream:
            return await self._generate_stream(request, specs[0], rid)
        results = await asyncio.gather(*(self._run_one(s, rid if not batch else None) for s in specs))
        out = [{"text": text, "output_ids": ids,
                "meta_info": self._meta(req, Progress(req.generated, req.verify_ct, req.correct_drafts, True), t0)}
               for req, ids, text, t0 in results]
        return web.json_response(out if batch else out[0])

    async def _generate_stream(self, request, spec: GenSpec, rid) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        text = ""
        try:
            async for req, progress, new, ids, t0 in self._stream_one(spec, rid):
                text += synth.detokenize(new)
                chunk = {"text": text, "output_ids": list(ids), "meta_info": self._meta(req, progress, t0)}
                await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
        except ConnectionResetError:
            pass  # the client went away; _stream_one aborted the request
        return resp

    # ---------------------------------------------------------------- OpenAI
    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self._openai(request, chat=False)

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        return await self._openai(request, chat=True)

    async def _openai(self, request: web.Request, chat: bool) -> web.StreamResponse:
        from .openai_format import OpenAIFormatter

        if (resp := self._not_ready()) is not None:
            return resp
        try:
            body = await self._json_body(request)
            spec, stream, options = (parse_chat if chat else parse_completion)(body)
        except BadRequest as exc:
            return _error(400, str(exc))
        self._count_accepted()
        if (failure := self._runtime_failure(spec)) is not None:
            return _error(500, failure)
        fmt = OpenAIFormatter(chat=chat, model=body.get("model") or self.model_name)
        details = bool(body.get("return_spec_tokens_details"))
        if not stream:
            req, ids, text, t0 = await self._run_one(spec, None)
            ext = self._sglext(req, Progress(req.generated, req.verify_ct, req.correct_drafts, True), t0, details)
            return web.json_response(fmt.response(text, req.prompt_tokens, len(ids), ext))
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"})
        await resp.prepare(request)
        try:
            first = True
            async for req, progress, new, ids, t0 in self._stream_one(spec, None):
                ext = self._sglext(req, progress, t0, details) if progress.finished else None
                for chunk in fmt.stream_chunks(synth.detokenize(new), req.prompt_tokens, len(ids),
                                               progress.finished, first, options, ext):
                    await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                first = False
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
        except ConnectionResetError:
            pass
        return resp

    def _sglext(self, req: SimRequest, progress: Progress, t0: float, wanted: bool) -> dict | None:
        """``sglext`` of an OpenAI answer: spec_tokens_details when asked for and speculating."""
        from .openai_format import spec_tokens_details

        if not wanted:
            return None
        details = spec_tokens_details(self._meta(req, progress, t0))
        return {"spec_tokens_details": details} if details else None

    async def models(self, request: web.Request) -> web.Response:
        args = self.plan.server_args
        return web.json_response({"object": "list", "data": [{
            "id": self.model_name, "object": "model", "created": int(self.startup_time),
            "owned_by": "sglang", "root": args["model_path"],
            "max_model_len": args.get("context_length") or self.model.profile.runtime.default_context_tokens,
        }]})

    # ---------------------------------------------------------------- health and state
    async def health(self, request: web.Request) -> web.Response:
        return web.Response(status=200 if self.ready else 503)

    async def health_generate(self, request: web.Request) -> web.Response:
        """503 while loading; then a real 1-token generation (http_server.py health_generate)."""
        if not self.ready:
            return web.Response(status=503)
        req = SimRequest(rid=f"HEALTH_CHECK_{uuid.uuid4().hex}", prompt_tokens=1, max_new_tokens=1,
                         predictability=0.5)
        await self.engine.submit(req).done
        return web.Response(status=200)

    def _resolved_args(self) -> dict:
        return dict(self.plan.server_args)

    async def server_info(self, request: web.Request) -> web.Response:
        args = self._resolved_args()
        stats = self.engine.stats
        state = dict(args)
        state.update({
            "max_running_requests": self.max_running_requests,
            "effective_max_running_requests_per_dp": self.max_running_requests,
            "last_gen_throughput": 0.0,
            "startup_time": self.startup_time,
        })
        if self.plan.speculative:
            state["avg_spec_accept_length"] = stats.avg_spec_accept_length
        if request.path == "/get_server_info":
            log.warning("Endpoint '/get_server_info' is deprecated and will be removed in a future "
                        "version. Please use '/server_info' instead.")
        return web.json_response({
            **args,
            "startup_time": self.startup_time,
            "internal_states": [state],
            "version": SIM_VERSION,
            "frontend": "python",
            "sim_profile": self.profile_name,
            "sim_speedup": self.speedup,
        })

    async def model_info(self, request: web.Request) -> web.Response:
        args = self.plan.server_args
        return web.json_response({
            "model_path": args["model_path"], "served_model_name": self.model_name,
            "tokenizer_path": args["tokenizer_path"], "is_generation": True,
            "preferred_sampling_params": None, "weight_version": "default",
            "has_image_understanding": False, "has_audio_understanding": False,
            "model_type": None, "architectures": None,
        })

    async def flush_cache(self, request: web.Request) -> web.Response:
        """Only when idle, as SGLang's scheduler (scheduler.py, flush_cache)."""
        engine = self.engine
        if engine.busy:
            log.warning(f"Cache not flushed because there are pending requests. "
                        f"#queue-req: {len(engine.waiting)}, #running-req: {len(engine.running)}")
            return web.Response(text=FLUSH_FAILED, status=400)
        log.info("Cache flushed successfully!")
        return web.Response(text=FLUSH_OK, status=200)

    async def metrics(self, request: web.Request) -> web.Response:
        from .metrics import prometheus_text

        return web.Response(text=prometheus_text(self), content_type="text/plain", charset="utf-8")
