"""The simulated server's HTTP API: SGLang 0.5.x's routes, field names, status codes and errors.

Routes (``srt/entrypoints/http_server.py`` unless noted): ``POST /generate``, ``POST
/v1/completions`` and ``/v1/chat/completions`` (``srt/entrypoints/openai/``), ``GET /v1/models``,
``GET /health`` and ``/health_generate`` (503 until loaded and while shutting down; then a real
one-token generation), ``GET /server_info`` and ``/get_server_info``, ``GET /get_model_info`` and
``/model_info``, ``GET|POST /flush_cache`` (400 unless idle), ``GET /metrics`` (Prometheus text,
with ``--enable-metrics``), ``GET|HEAD /``. Request validation and error bodies:
:mod:`tuner.sim.requests`; any other path or method gets FastAPI's JSON 404/405 (or Starlette's
307 to the path's trailing-slash twin), CORS is :mod:`tuner.sim.cors`.

Request lifecycle, as SGLang's tokenizer manager handles it (``tokenizer_manager.py``, the abort
table at the end): a request whose client disconnects is aborted in the scheduler (aiohttp
cancels the handler when the connection closes; SGLang polls ``request.is_disconnected()``), so an
abandoned request leaves no work behind and ``/flush_cache`` succeeds at once. On shutdown
(:meth:`SimService.shut_down`) requests still running after a short drain are aborted with 503.

:class:`SimService` owns the :class:`~tuner.sim.scheduler.BatchEngine` and the request counter
that ``--sim-crash-after-requests`` watches; it is used from one event loop only.

Why one module of over 400 lines: every route is a method of the one :class:`SimService`, whose
state (the engine, the request ids and counters, readiness, the shutdown drain, disconnect
aborts) they all share; parsing and validation (:mod:`tuner.sim.requests`), answer shapes
(:mod:`tuner.sim.openai_format`, :mod:`tuner.sim.streaming`) and ``/server_info``
(:mod:`tuner.sim.server_info`) already live elsewhere, so what is left is the routes themselves.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import os
import sys
import time
import uuid

from aiohttp import web

from ..sglang.arg_types import decode_graph_max_bs
from . import cors
from . import text as synth
from .args import LaunchPlan
from .auth import middleware as key_check
from .live_ids import HoldIds, LiveRequestIds
from .request_models import ApiError, flush_timeout, openai_error
from .requests import ContextCheck, GenSpec, ParsedRequest, Served, parse_chat, parse_completion, parse_generate
from .scheduler import BatchEngine, Progress, SimRequest
from .server_info import SIM_VERSION, kv_capacity_tokens, resolved_server_args, server_info_body
from .streaming import CumulativeChunks, IncrementalChunks, Timekeeping

log = logging.getLogger("tuner.sim")

#: /flush_cache answers, word for word (http_server.py, flush_cache).
FLUSH_OK = ("Cache flushed.\nPlease check backend logs for more details. "
            "(When there are running or waiting requests, the operation will not be performed.)\n")
FLUSH_FAILED = "Flush cache failed.\n"
#: How long SIGTERM waits for running requests to finish before aborting them (wall seconds).
DRAIN_S = 0.5
#: How often a non-streamed request checks that its client is still connected (wall seconds).
DISCONNECT_POLL_S = 0.05
__all__ = ["SIM_VERSION", "SimService"]


class ShuttingDown(Exception):
    """The request was aborted because the server is stopping."""


def _error(status: int, message: str) -> web.Response:
    # http_server.py, _create_error_response: {"error": {"message": str(e)}}.
    return web.json_response({"error": {"message": message}}, status=status)


@web.middleware
async def starlette_routing_errors(request: web.Request, handler):
    """An unknown path, or a known one with another method, answered as SGLang's FastAPI app answers
    them: Starlette's router raises its own ``HTTPException`` (404; 405 with ``Allow``), which
    SGLang's handler for FastAPI's subclass (http_server.py lines 578-632) does not catch, so FastAPI's
    default ``http_exception_handler`` (fastapi/exception_handlers.py) renders it:
    ``{"detail": "Not Found"}`` / ``{"detail": "Method Not Allowed"}``, ``application/json``."""
    try:
        return await handler(request)
    except web.HTTPNotFound:
        if (location := await _slash_twin(request)) is not None:
            # starlette/routing.py Router.app, redirect_slashes: 307 to the twin, query kept
            return web.Response(status=307, headers={"Location": location})
        return web.json_response({"detail": "Not Found"}, status=404)
    except web.HTTPMethodNotAllowed as exc:
        # starlette/routing.py Route.handle: headers={"Allow": ", ".join(self.methods)}
        return web.json_response({"detail": "Method Not Allowed"}, status=405,
                                 headers={"Allow": ", ".join(sorted(exc.allowed_methods))})


async def _slash_twin(request: web.Request) -> str | None:
    """The URL Starlette redirects an unmatched path to (``Router.app``, ``redirect_slashes``): the
    path with its trailing slash dropped, or one added, when that path has a route for any method;
    else None. ``/`` is never redirected."""
    path = request.path
    if path == "/":
        return None
    twin = path[:-1] if path.endswith("/") else path + "/"
    url = request.url.with_path(twin).with_query(request.query_string)
    match = await request.app.router.resolve(request.clone(rel_url=url.relative()))
    if isinstance(match.http_exception, web.HTTPNotFound):
        return None
    return str(url)


async def _starlette_json_type(request: web.Request, response: web.StreamResponse) -> None:
    """``on_response_prepare``: a JSON answer's ``Content-Type`` as SGLang's, ``application/json``
    without aiohttp's ``; charset=utf-8`` (Starlette's ``Response.init_headers`` adds a charset to
    ``text/*`` media types only; SGLang answers JSON with ``ORJSONResponse`` / ``JSONResponse``)."""
    if response.headers.get("Content-Type") == "application/json; charset=utf-8":
        response.headers["Content-Type"] = "application/json"


def _disconnected(request: web.Request) -> bool:
    transport = request.transport
    return transport is None or transport.is_closing()


def _api_error(exc: ApiError) -> web.Response:
    if isinstance(exc.body, str):  # Starlette's PlainTextResponse: text/plain; charset=utf-8
        return web.Response(text=exc.body, status=exc.status, content_type="text/plain", charset="utf-8")
    return web.json_response(exc.body, status=exc.status)


class SimService:
    """State shared by the routes: launch plan, performance model, engine, readiness, counters."""

    def __init__(self, plan: LaunchPlan, model, *, profile_name: str, speedup: float, seed: int,
                 crash_after_requests: int | None = None):
        self.plan, self.model = plan, model
        self.profile_name, self.speedup = profile_name, speedup
        self.crash_after = crash_after_requests
        self.resolved = resolved_server_args(plan, model)
        args = self.resolved
        self.engine = BatchEngine(
            model, spec=plan.spec, max_running_requests=plan.max_running_requests, speedup=speedup,
            seed=seed, stream_interval=args["stream_interval"],
            # 0: no decode CUDA graph at all, every step eager (--disable-cuda-graph, ...)
            # the decode sizes as SGLang reads them: a --cuda-graph-bs-decode list, or the JSON config's
            # decode max_bs or bs, sets the largest captured batch too (arg_types.decode_graph_max_bs)
            cuda_graph_max_bs=((decode_graph_max_bs(plan.server_args) or None)
                               if plan.decode_cuda_graphs else 0),
        )
        self.max_running_requests = plan.max_running_requests  #: effective batch cap
        self.ready = False
        self.shutting_down = False
        self.accepted = 0  #: generate requests accepted (health checks excluded)
        self.startup_time = time.time()
        self.model_name = args["served_model_name"]
        self.limits = ContextCheck(args["context_length"], self._reserved_tokens(),
                                   model.prompt_tokens, kv_capacity_tokens(model, args))
        lora = args.get("enable_lora")
        self.live_ids = LiveRequestIds()  #: the client-chosen ids of the requests being served
        self.served = Served(self.model_name, bool(lora) or (lora is None and bool(args.get("lora_paths"))),
                             args.get("preferred_sampling_params") or None, self.live_ids)
        self.timekeeping = Timekeeping(speedup, clock=self.engine.clock)
        self._salt = 0
        self._flush_pending = False  #: a /flush_cache?timeout=S is waiting for the server to idle
        self._facts: dict[int, tuple[int, float]] = {}
        self._replies = synth.Continuations()

    def _reserved_tokens(self) -> int:
        # managers/utils.py compute_num_reserved_tokens: EAGLE keeps draft tokens in output slots.
        spec = self.plan.spec
        if spec is None or not spec.num_steps:
            return 0
        return max(spec.eagle_topk * spec.num_steps, spec.num_draft_tokens)

    def set_max_running_requests(self, value: int) -> None:
        """The cap SGLang derives from memory when none is given and decoding is autoregressive."""
        self.max_running_requests = value
        self.engine.max_running = value
        self.resolved["max_running_requests"] = value

    # ---------------------------------------------------------------- app
    def build_app(self) -> web.Application:
        # --api-key / --admin-api-key: SGLang's key check (tuner.sim.auth, utils/auth.py)
        check = key_check(self.resolved.get("api_key"), self.resolved.get("admin_api_key"))
        # outermost first: the key check, CORS (tuner.sim.cors), then the 404/405 answers, as SGLang's
        # middleware stack is ordered (http_server.py lines 500-506 and 2887-2898)
        app = web.Application(client_max_size=64 << 20,
                              middlewares=[*([check] if check else []), cors.middleware, starlette_routing_errors])
        app.on_response_prepare.append(cors.add_headers)
        app.on_response_prepare.append(_starlette_json_type)
        r = app.router
        # FastAPI's @app.get routes answer GET only: HEAD gets 405 (fastapi/routing.py APIRoute
        # takes the methods as given; Starlette's own Route would add HEAD), not aiohttp's default
        get = functools.partial(r.add_get, allow_head=False)
        # http_server.py lines 2122-2128 (without SGLANG_OLLAMA_ROOT_ROUTE): GET and HEAD "/" answer
        # the JSON string "SGLang is running"
        r.add_get("/", self.root)
        r.add_post("/generate", self.generate)
        r.add_put("/generate", self.generate)
        r.add_post("/v1/completions", self.completions)
        r.add_post("/v1/chat/completions", self.chat_completions)
        get("/v1/models", self.models)
        # Starlette's {model:path} matches ".*": /v1/models/ asks for the model "" (a 404 body of its own)
        get("/v1/models/{model:.*}", self.retrieve_model)
        get("/ready", self.ready_check)
        get("/health", self.health_generate)
        get("/health_generate", self.health_generate)
        get("/server_info", self.server_info)
        get("/get_server_info", self.server_info)
        get("/model_info", self.model_info)
        get("/get_model_info", self.model_info)
        r.add_route("GET", "/flush_cache", self.flush_cache)
        r.add_route("POST", "/flush_cache", self.flush_cache)
        if self.plan.server_args.get("enable_metrics"):
            r.add_get("/metrics", self.metrics)
        return app

    async def shut_down(self, drain_s: float = DRAIN_S) -> None:
        """SIGTERM: refuse health checks (503, as SGLang's ``gracefully_exit``), let running requests
        finish for up to ``drain_s`` wall seconds, then abort the rest (their clients get 503)."""
        self.shutting_down = True
        engine = self.engine
        log.warning(f"SIGTERM received. Draining requests and shutting down... Remaining number of "
                    f"requests {engine.inflight}.")
        deadline = time.monotonic() + drain_s
        while engine.busy and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        if engine.busy:
            n = engine.abort_all(ShuttingDown("The server is shutting down (SIGTERM); request aborted."))
            log.warning(f"Aborted {n} request(s) still running after {drain_s:g} s of draining.")
            await asyncio.sleep(0)  # let the handlers answer before the runner closes

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

    def _submit(self, spec: GenSpec, stream: bool) -> tuple[SimRequest, int, int]:
        key = synth.prompt_key(spec.text, spec.input_ids)
        prompt_tokens, predictability = self._prompt_facts(key, spec)
        salt = 0
        if not spec.greedy:  # sampling: a different continuation per request
            self._salt += 1
            salt = self._salt
        req = SimRequest(rid=spec.rid or uuid.uuid4().hex, prompt_tokens=prompt_tokens,
                         max_new_tokens=spec.max_new_tokens,
                         predictability=predictability, stream=stream)
        return self.engine.submit(req), key, salt

    @staticmethod
    def _final(req: SimRequest) -> Progress:
        """A finished request's progress, as its last step left it."""
        return Progress(req.generated, req.verify_ct, req.correct_drafts, True, req.finish_m)

    def _meta(self, req: SimRequest, progress: Progress) -> dict:
        """SGLang's ``meta_info``. ``e2e_latency`` is in wall seconds, as SGLang's, and covers the
        request's time in the scheduler (arrival to this step, model seconds / speedup): what the
        HTTP layer adds is left out, so a client can count it unscaled (``tuner.bench``). As in
        SGLang 0.5.23 (``managers/tokenizer_manager.py`` lines 2742-2756: ``if state.finished``),
        ``e2e_latency`` and the speculative figures are in a finished request's meta_info only, not
        in a stream's earlier chunks."""
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
        }
        if not finished:
            return meta
        meta["e2e_latency"] = (progress.at_m - req.arrival_m) / self.speedup
        if req.first_m is not None and (self.speedup != 1 or self.plan.server_args.get("enable_metrics")):
            # SGLang 0.5.23 sends it under --enable-metrics (observability/req_time_stats.py
            # convert_to_output_meta_info: first_token_time - created_time), and so does the simulator;
            # on a sped-up clock (--sim-speedup, no SGLang counterpart) always: the client splits its wall
            # TTFT into the server's part (sped up) and the loopback's (not) by it; the few wall ms of a
            # TTFT at a high --sim-speedup are no more than the loopback's jitter, and split by the whole
            # request's time outside e2e_latency the figure swung ~6x between runs.
            meta["first_token_latency"] = (req.first_m - req.arrival_m) / self.speedup
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

    def _delivered(self, req: SimRequest, at_m: float) -> None:
        self.timekeeping.delivered(self.engine.wall_at(at_m), at_m - req.arrival_m)

    async def _run_one(self, spec: GenSpec,
                       request: web.Request | None = None) -> tuple[SimRequest, list[int], str]:
        """One non-streamed output. While it runs, the client's connection is checked every
        ``DISCONNECT_POLL_S`` (SGLang polls ``request.is_disconnected()`` the same way,
        tokenizer_manager.py ``_stream_one_response``); a closed connection, or a cancelled
        handler, aborts the request in the engine and raises ``ConnectionResetError``."""
        req, key, salt = self._submit(spec, stream=False)
        try:
            while True:
                done, _ = await asyncio.wait((req.done,), timeout=DISCONNECT_POLL_S)
                if done:
                    break
                if request is not None and _disconnected(request):
                    self._abort_disconnected(req)
                    raise ConnectionResetError("client disconnected")
            req.done.result()  # ShuttingDown raises here
        except asyncio.CancelledError:
            self._abort_disconnected(req)
            raise
        self._delivered(req, req.finish_m)
        return (req, *self._replies.reply(key, req.generated, salt))

    async def _run_all(self, parsed: ParsedRequest, request: web.Request):
        """Every output of a non-streamed request: the results, ``None`` if the client went away
        (each output aborted itself), or the :class:`ShuttingDown` that aborted them."""
        results = await asyncio.gather(
            *(self._run_one(s, request) for s in parsed.specs), return_exceptions=True)
        for r in results:
            if isinstance(r, ShuttingDown):
                return r
        for r in results:
            if isinstance(r, ConnectionResetError):
                return None
            if isinstance(r, BaseException):
                raise r
        return results

    def _abort_disconnected(self, req: SimRequest) -> None:
        if not req.done.done():
            log.info(f"Request is disconnected from the client side. Abort request rid={req.rid}")
            self.engine.abort(req)

    async def _stream_one(self, spec: GenSpec):
        """Yields (req, progress, new_ids, n_ids) as chunks become due; aborts the request in
        the engine if the consumer stops early (a disconnected client).

        Chunks that came due while the previous one was being written are sent as one, as SGLang
        does (``tokenizer_manager.py`` ``_wait_one_response``: it drains every pending output and
        sends the latest), so a stream that falls behind catches up instead of queueing. Each
        skipped chunk still counts as a delivery, at the time it went out, for the time-keeping
        watch."""
        req, key, salt = self._submit(spec, stream=True)
        n_ids = 0
        try:
            if spec.max_new_tokens == 0:
                # nothing to generate, so the engine queues no chunk (it sends new tokens only): the
                # stream's one chunk is the finished request's, as SGLang streams the output it
                # finishes after prefill (finish_reason length 0), then [DONE]
                await req.done  # ShuttingDown raises here
                yield req, self._final(req), [], 0
                return
            while True:
                pending = [await req.chunks.get()]
                while not req.chunks.empty():
                    pending.append(req.chunks.get_nowait())
                if None in pending:  # aborted by shutdown
                    raise req.done.exception() or ShuttingDown()
                progress = pending[-1]
                new = synth.output_ids(key, n_ids, progress.generated, salt)
                n_ids += len(new)
                yield req, progress, new, n_ids
                for skipped in pending[:-1]:
                    self._delivered(req, skipped.at_m)
                if progress.finished:
                    return
        finally:
            self._abort_disconnected(req)

    async def _stream_many(self, specs: list[GenSpec]):
        """Yields (i, req, progress, new_ids, n_ids) from the streams of every spec (i: its position)
        in the order their chunks come due, as tokenizer_manager.py ``_stream_batch_responses``
        (lines 2213-2240) yields a batch's outputs. Leaving early aborts every one."""
        if len(specs) == 1:
            async for item in self._stream_one(specs[0]):
                yield (0, *item)
            return
        queue: asyncio.Queue = asyncio.Queue()
        done = object()

        async def pump(i: int, spec: GenSpec) -> None:
            try:
                async for item in self._stream_one(spec):
                    queue.put_nowait((i, item))
                queue.put_nowait((i, done))
            except ShuttingDown as exc:
                queue.put_nowait((i, exc))

        pumps = [asyncio.create_task(pump(i, spec)) for i, spec in enumerate(specs)]
        try:
            left = len(specs)
            while left:
                i, item = await queue.get()
                if item is done:
                    left -= 1
                elif isinstance(item, ShuttingDown):
                    raise item
                else:
                    yield (i, *item)
        finally:
            for task in pumps:
                task.cancel()  # each _stream_one aborts its request on the way out
            await asyncio.gather(*pumps, return_exceptions=True)

    def _not_ready(self) -> web.Response | None:
        if self.shutting_down:
            return _error(503, "The server is shutting down.")
        return None if self.ready else _error(503, "The server is not ready yet (model loading).")

    async def _prepare_stream(self, request: web.Request) -> web.StreamResponse:
        # StreamingResponse(media_type="text/event-stream") and nothing else (http_server.py line 979,
        # serving_chat.py line 2437, serving_completions.py line 221): Starlette's Response.init_headers
        # appends "; charset=utf-8" to a text/ media type; no Cache-Control (only /v1/responses sets it)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream; charset=utf-8"})
        await resp.prepare(request)
        return resp

    # ---------------------------------------------------------------- /generate
    async def generate(self, request: web.Request) -> web.StreamResponse:
        if (resp := self._not_ready()) is not None:
            return resp
        # the request's ids are in flight from its acceptance (hold) to the handler's end, by any path
        with self.live_ids.lease() as hold:
            return await self._generate(request, hold)

    async def _generate(self, request: web.Request, hold: HoldIds) -> web.StreamResponse:
        try:
            parsed = parse_generate(await request.read(), request.headers.get("Content-Type"), self.limits,
                                    self.served)
        except ApiError as exc:
            if exc.in_stream:
                return await self._stream_error(request, exc.body["error"]["message"])
            return _api_error(exc)
        hold(spec.rid for spec in parsed.specs)
        for _ in parsed.specs:
            self._count_accepted()
        if parsed.stream:
            return await self._generate_stream(request, parsed)
        results = await self._run_all(parsed, request)
        if isinstance(results, ShuttingDown):
            return _error(503, str(results))
        if results is None:
            return web.Response(status=499)  # nobody reads it: the client is gone
        # tokenizer_manager.py _handle_batch_output (lines 2665-2670): {text, output_ids, meta_info};
        # a batch is the list of them in order (_collect_batch_responses), with no "index" key: only a
        # streamed batch's chunks carry one (_stream_batch_responses, line 2224)
        out = [{"text": text, "output_ids": ids, "meta_info": self._meta(req, self._final(req))}
               for req, ids, text in results]
        return web.json_response(out if parsed.batch else out[0])

    async def _stream_error(self, request: web.Request, message: str) -> web.StreamResponse:
        """A streamed /generate the tokenizer manager refuses: SGLang's StreamingResponse has sent 200
        before its generator runs the checks, so the ValueError comes as an event, then [DONE]
        (http_server.py stream_results, lines 951-975)."""
        resp = await self._prepare_stream(request)
        event = {"error": {"message": message, "type": "invalid_request_error", "code": 400, "retryable": False}}
        await resp.write(b"data: " + json.dumps(event).encode() + b"\n\ndata: [DONE]\n\n")
        await resp.write_eof()
        return resp

    async def _generate_stream(self, request, parsed: ParsedRequest) -> web.StreamResponse:
        resp = await self._prepare_stream(request)
        # --incremental-streaming-output: text and ids new since the last chunk (tokenizer_manager.py);
        # a batch's chunks carry their output's "index" (_stream_batch_responses, line 2224)
        kind = IncrementalChunks if self.resolved.get("incremental_streaming_output") else CumulativeChunks
        chunks = [kind(i if parsed.batch else None) for i in range(len(parsed.specs))]
        try:
            async for i, req, progress, new, _ in self._stream_many(parsed.specs):
                await resp.write(chunks[i].chunk(synth.detokenize(new), new, self._meta(req, progress)))
                self._delivered(req, progress.at_m)
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
        except ShuttingDown as exc:
            await resp.write(b"data: " + json.dumps({"error": {"message": str(exc)}}).encode() + b"\n\n")
        except ConnectionResetError:
            pass  # the client went away; _stream_one aborted the request
        return resp

    # ---------------------------------------------------------------- OpenAI
    async def completions(self, request: web.Request) -> web.StreamResponse:
        return await self._openai(request, chat=False)

    async def chat_completions(self, request: web.Request) -> web.StreamResponse:
        return await self._openai(request, chat=True)

    async def _openai(self, request: web.Request, chat: bool) -> web.StreamResponse:
        if (resp := self._not_ready()) is not None:
            return resp
        with self.live_ids.lease() as hold:  # as generate's
            return await self._openai_answer(request, chat, hold)

    async def _openai_answer(self, request: web.Request, chat: bool, hold: HoldIds) -> web.StreamResponse:
        from .openai_format import OpenAIFormatter, spec_tokens_details

        try:
            parsed: ParsedRequest = (parse_chat if chat else parse_completion)(
                await request.read(), request.headers.get("Content-Type"), self.limits, self.served)
        except ApiError as exc:
            return _api_error(exc)
        hold(spec.rid for spec in parsed.specs)
        for _ in parsed.specs:
            self._count_accepted()
        model = parsed.model or self.model_name
        cache_report = bool(self.resolved.get("enable_cache_report"))
        if not parsed.stream:
            results = await self._run_all(parsed, request)
            if isinstance(results, ShuttingDown):
                return _api_error(openai_error(str(results), "ServiceUnavailable", 503))
            if results is None:
                return web.Response(status=499)  # nobody reads it: the client is gone
            ext = self._sglext([(req, self._final(req)) for req, _, _ in results], parsed)
            fmt = OpenAIFormatter(chat=chat, model=model, rid=results[0][0].rid, cache_report=cache_report)
            return web.json_response(fmt.response([(text, req.prompt_tokens, len(ids))
                                                   for req, ids, text in results], parsed.n, ext))
        rid = uuid.uuid4().hex  # the answer's id until the first output's chunk names its own
        # utils.py should_include_usage (lines 250-264): --stream-response-default-include-usage turns
        # the usage chunk on for every stream, stream_options or not
        options = dict(parsed.options or {})
        options["include_usage"] = bool(options.get("include_usage")
                                        or self.resolved.get("stream_response_default_include_usage"))
        stream = OpenAIFormatter(chat=chat, model=model, rid=rid, cache_report=cache_report).stream(parsed.n,
                                                                                                  options)
        resp = await self._prepare_stream(request)
        try:
            details = {}
            async for i, req, progress, new, n_ids in self._stream_many(parsed.specs):
                for chunk in stream.step(i, req.rid, synth.detokenize(new), req.prompt_tokens, n_ids,
                                         progress.finished):
                    await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
                if progress.finished and parsed.spec_details:
                    details[i] = spec_tokens_details(self._meta(req, progress))
                self._delivered(req, progress.at_m)
            for chunk in stream.close({i: d for i, d in details.items() if d is not None}):
                await resp.write(b"data: " + json.dumps(chunk).encode() + b"\n\n")
            await resp.write(b"data: [DONE]\n\n")
            await resp.write_eof()
        except ShuttingDown as exc:
            body = {"error": openai_error(str(exc), "ServiceUnavailable", 503).body}
            await resp.write(b"data: " + json.dumps(body).encode() + b"\n\n")
        except ConnectionResetError:
            pass
        return resp

    def _sglext(self, outputs: list, parsed: ParsedRequest) -> dict | None:
        """``sglext`` of an OpenAI answer: spec_tokens_details when asked for and speculating, one
        object, or a list of them with ``n > 1`` (serving_chat.py; serving_completions.py)."""
        from .openai_format import spec_tokens_details

        if not parsed.spec_details:
            return None
        details = [d for d in (spec_tokens_details(self._meta(req, progress)) for req, progress in outputs)
                   if d is not None]
        if not details:
            return None
        return {"spec_tokens_details": details if parsed.n > 1 else details[0]}

    def _model_card(self, name: str) -> dict:
        """protocol.py ``ModelCard`` (lines 87-96) as http_server.py builds it for the served model
        (lines 2001-2007, 2044-2048): ``root`` is the served name too, ``created`` the time of the
        answer (its default_factory), ``parent`` null (no LoRA adapters)."""
        return {"id": name, "object": "model", "created": int(time.time()), "owned_by": "sglang",
                "root": name, "parent": None, "max_model_len": self.resolved["context_length"]}

    async def models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [self._model_card(self.model_name)]})

    async def retrieve_model(self, request: web.Request) -> web.Response:
        """``GET /v1/models/{model:path}`` (http_server.py lines 2025-2047): the served model's card,
        else 404 with an OpenAI-style error."""
        model = request.match_info["model"]
        if model != self.model_name:
            return web.json_response({"error": {"message": f"The model '{model}' does not exist",
                                                "type": "invalid_request_error", "param": "model",
                                                "code": "model_not_found"}}, status=404)
        return web.json_response(self._model_card(model))

    # ---------------------------------------------------------------- health and state
    async def root(self, request: web.Request) -> web.Response:
        """``sglang_root`` (http_server.py lines 2122-2128): FastAPI's JSON of the returned str."""
        return web.json_response("SGLang is running")

    async def ready_check(self, request: web.Request) -> web.Response:
        """http_server.py ``ready`` (lines 714-718): 200 when the tokenizer manager ``is_ready()`` (up,
        not shutting down, not paused; the simulator never pauses), else 503; no body either way."""
        return web.Response(status=200 if self.ready and not self.shutting_down else 503)

    async def health_generate(self, request: web.Request) -> web.Response:
        """http_server.py ``health_generate`` (both ``/health`` and ``/health_generate``, as with
        SGLANG_ENABLE_HEALTH_ENDPOINT_GENERATION's default, lines 721-799): 503 while loading or
        shutting down; else 200 once SGLang's one-second poll has passed (in model time:
        1 / --sim-speedup wall seconds) and the server has answered something since. On an idle
        server that is a one-token generation of ``input_ids [0]``, left out of the metrics
        (``log_metrics=False``); on a busy one the scheduler skips the health request, the running
        requests' outputs stand for it (scheduler.py lines 2240-2246, ``is_fully_idle``), so it
        takes no batch slot and waits for none."""
        if not self.ready or self.shutting_down:
            return web.Response(status=503)
        tic = time.monotonic()
        if self.engine.busy:
            # the simulated engine cannot stall while it holds requests: their next output (every
            # decode step for a stream, every 50 tokens otherwise) comes within the poll
            await asyncio.sleep(1.0 / self.speedup)
            return web.Response(status=200)
        req = SimRequest(rid=f"HEALTH_CHECK_{uuid.uuid4().hex}", prompt_tokens=1, max_new_tokens=1,
                         predictability=0.5, log_metrics=False)
        self.engine.submit(req)
        try:
            await req.done
        except ShuttingDown:
            return web.Response(status=503)
        except asyncio.CancelledError:
            self.engine.abort(req)
            raise
        await asyncio.sleep(max(0.0, tic + 1.0 / self.speedup - time.monotonic()))
        return web.Response(status=200)

    async def server_info(self, request: web.Request) -> web.Response:
        if request.path == "/get_server_info":
            log.warning("Endpoint '/get_server_info' is deprecated and will be removed in a future "
                        "version. Please use '/server_info' instead.")
        return web.json_response(server_info_body(self))

    async def model_info(self, request: web.Request) -> web.Response:
        if request.path == "/get_model_info":
            log.warning("Endpoint '/get_model_info' is deprecated and will be removed in a future "
                        "version. Please use '/model_info' instead.")
        from .server_info import model_info_body

        return web.json_response(model_info_body(self))

    async def flush_cache(self, request: web.Request) -> web.Response:
        """Only when idle, as SGLang's scheduler (scheduler.py, flush_cache). ``?timeout=S`` waits up
        to S seconds (model time) for the server to become idle, as SGLang's deferred flush does
        (scheduler_components/flush_wrapper.py): "Timed out waiting for idle state." after that,
        and "Another flush_cache is already in progress." to a second one meanwhile (both 400)."""
        try:
            timeout = flush_timeout(request.query.get("timeout"), request.method)
        except ApiError as exc:
            return _api_error(exc)
        engine = self.engine
        if self._flush_pending:
            return web.Response(text="Another flush_cache is already in progress.", status=400)
        if engine.busy and timeout > 0:
            self._flush_pending = True
            try:
                deadline = time.monotonic() + timeout / self.speedup
                while engine.busy and time.monotonic() < deadline:
                    await asyncio.sleep(min(DISCONNECT_POLL_S, max(0.0, deadline - time.monotonic())))
            finally:
                self._flush_pending = False
            if engine.busy:
                log.warning("Deferred flush_cache timed out while waiting for idle state.")
                return web.Response(text="Timed out waiting for idle state.", status=400)
        if engine.busy:
            log.warning(f"Cache not flushed because there are pending requests. "
                        f"#queue-req: {len(engine.waiting)}, #running-req: {len(engine.running)}")
            return web.Response(text=FLUSH_FAILED, status=400)
        log.info("Cache flushed successfully!")
        return web.Response(text=FLUSH_OK, status=200)

    async def metrics(self, request: web.Request) -> web.Response:
        from .metrics import prometheus_text

        return web.Response(text=prometheus_text(self), content_type="text/plain", charset="utf-8")

