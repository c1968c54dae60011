"""The HTTP client: one aiohttp session that speaks SGLang's native API, the OpenAI completions API or
the OpenAI chat API (``/v1/chat/completions``: the server applies the model's chat template).

Why aiohttp: ``benchmarks/client_overhead.py`` measured it against the article's requests + threads
client on this 2-core machine; asyncio costs less per request than a thread per request, so the
client stays far from being the bottleneck at high concurrency (SGLang's own
``sglang/benchmark/serving.py`` makes the same choice).

Contract: :meth:`BenchClient.request` never raises for a failed request; it returns a
:class:`RequestRecord` with ``ok`` false and the failure's kind. Only :meth:`BenchClient.server_info`
raises (:class:`ServerUnreachableError`) when nothing answers at the URL (``timed_out`` when the
connection was accepted and the answer never came). The caller owns the client
(``async with``) and the event loop.

Why one module of over 400 lines: the three APIs share one session, one timeout rule and one way of
turning an answer (streamed or not) into a :class:`RequestRecord`; per API only the request body
and the answer's field names differ, which are a few lines each, so splitting by API would repeat
the shared part three times.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import time
import uuid
from typing import Any, NamedTuple

import aiohttp

from ..config.wording import counted
from .open_files import check as check_own_files
from .records import RequestRecord
from .sglext import REQUEST_FIELD, accept_length, read_spec_details

#: The APIs the client speaks: SGLang's /generate, OpenAI /v1/completions, OpenAI /v1/chat/completions.
APIS = ("generate", "openai", "chat")

#: How long /flush_cache is retried while SGLang says it is busy ("When there are running or
#: waiting requests, the operation will not be performed": http_server.py, flush_cache -> 400).
FLUSH_RETRY_S = 10.0
#: Deadline of the liveness probe after a connection error.
PROBE_TIMEOUT_S = 3.0
#: Wall seconds a request may take beyond its model-time deadline on a sped-up clock (the
#: simulator): loopback HTTP and a loaded event loop do not run faster with --sim-speedup.
WALL_SLACK_S = 2.0
#: Wall seconds a pooled keep-alive connection is used again for. SGLang 0.5.23's HTTP server closes a
#: connection idle for ``SGLANG_TIMEOUT_KEEP_ALIVE`` seconds, 5 by default (``srt/environ.py``;
#: ``entrypoints/http_server.py`` ``launch_server``: ``uvicorn.Config(timeout_keep_alive=...)``), while
#: aiohttp's pool reuses one for 15 s and never sends a POST again on a connection that closed under it
#: (``client.py``: only idempotent methods are retried): a request sent as the server closed its
#: connection failed as ``disconnected``, and with it the trial. Under 5 s, with room for the time
#: between the server's last byte and the pool taking the connection back.
POOL_IDLE_S = 3.0
#: Wall seconds a stream may stay open after its ``data: [DONE]``: SGLang ends the response right after
#: it (http_server.py stream_results returns; the chunked body's last chunk follows at once).
AFTER_DONE_S = 5.0


class BenchError(RuntimeError):
    """The benchmark could not run or finish."""


class ServerUnreachableError(BenchError):
    """Nothing answered at the URL before the suite began. ``timed_out``: something accepted the
    connection but sent no answer in time (a hung server), rather than refusing it."""

    def __init__(self, message: str, timed_out: bool = False):
        super().__init__(message)
        self.timed_out = timed_out


_CONNECTION_ERRORS = (aiohttp.ClientConnectorError,)
_DISCONNECT_ERRORS = (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError, aiohttp.ClientPayloadError,
                      ConnectionResetError)


class PreparedRequest(NamedTuple):
    """One request ready to send: its URL, its JSON body, the request id (``rid``) the body names, and
    a digest of its prompt as sent (the text, or on chat the turns as JSON): answers to the same prompt
    must say the same ``prompt_tokens`` (:meth:`BenchClient._same_prompt_tokens`)."""
    url: str
    body: bytes
    rid: str
    prompt: str = ""


class BenchClient:
    """Requests to one server. ``api`` is ``generate`` (SGLang ``/generate``, default), ``openai``
    (``/v1/completions``) or ``chat`` (``/v1/chat/completions``, the prompt's chat turns);
    ``stream`` asks for server-sent events and measures TTFT and ITL."""

    def __init__(self, base_url: str, *, api: str = "generate", stream: bool = False,
                 timeout_s: float = 300.0, temperature: float = 0.0, ignore_eos: bool = True):
        if api not in APIS:
            raise ValueError(f"api must be one of {', '.join(APIS)}, got {api!r}")
        self.base_url = base_url.rstrip("/")
        self.api, self.stream = api, stream
        self.timeout_s, self.temperature, self.ignore_eos = timeout_s, temperature, ignore_eos
        #: model seconds per wall second: ``timeout_s`` is in model seconds (see :meth:`set_time_scale`)
        self.time_scale = 1.0
        self.model: str = "default"  #: the OpenAI "model" field; set from /server_info when known
        #: the server streams /generate text as deltas (SGLang's --incremental-streaming-output), not
        #: the whole text so far; set from /server_info when known
        self.incremental_stream = False
        self.t0 = time.perf_counter()  #: record times are relative to this
        self._session: aiohttp.ClientSession | None = None
        #: requests in flight per session, while it is (or once was) current; see :meth:`request`
        self._users: dict[aiohttp.ClientSession, int] = {}
        self.flush_supported = True
        #: whether an answer has named its request's own id (``rid``) back: then one naming another
        #: fails (:meth:`_for_request`)
        self.names_requests = False
        #: whether the server's /server_info says what it speculates (its flags as numbers, or no
        #: algorithm): its verify steps are then judged against that, by the study
        #: (:mod:`tuner.engine.verify`, as ``bad_response``) and ``tuner bench``; the client bounds
        #: them only otherwise (:meth:`_accept_problem`). Set by the suite runner.
        self.speculation_judged = False
        #: ``prompt_tokens`` the first answer to each prompt said, by the prompt as sent
        #: (:attr:`PreparedRequest.prompt`), and that answer's request (``phase prompt``)
        self._prompt_tokens: dict[str, tuple[int, str]] = {}

    async def __aenter__(self) -> "BenchClient":
        self._session = self._new_session()
        return self

    @staticmethod
    def _new_session() -> aiohttp.ClientSession:
        # limit=0: no connection cap, so a sweep at concurrency C really has C requests in flight.
        # keepalive_timeout: no connection idle long enough for SGLang to be closing it (POOL_IDLE_S).
        connector = aiohttp.TCPConnector(limit=0, keepalive_timeout=POOL_IDLE_S)
        return aiohttp.ClientSession(connector=connector, read_bufsize=1 << 20)

    async def __aexit__(self, *exc) -> None:
        for session in {*self._users, self._session} - {None}:  # the current one, and retired ones in use
            await session.close()
        self._session, self._users = None, {}

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None:
            raise RuntimeError("BenchClient used outside 'async with'")
        return self._session

    def now(self) -> float:
        return time.perf_counter() - self.t0

    # ---- server state --------------------------------------------------------------------------

    async def server_info(self) -> dict | None:
        """``GET /server_info`` (SGLang >= 0.4.x), falling back to the older ``/get_server_info``.

        Returns ``None`` when the server has neither; raises :class:`ServerUnreachableError` when
        nothing listens at the URL.
        """
        timeout = aiohttp.ClientTimeout(total=min(self.timeout_s, 30.0))
        for path in ("/server_info", "/get_server_info"):
            try:
                async with self.session.get(self.base_url + path, timeout=timeout,
                                            allow_redirects=False) as resp:
                    if resp.status == 200:
                        # bounded: a body without end (or of GBs) was read whole, 2.5 GB in 8 s (QA)
                        info = json.loads(await read_bounded(resp))
                        if isinstance(info, dict):
                            model = info.get("served_model_name") or info.get("model_path")
                            if isinstance(model, str) and model:
                                self.model = model
                            # http_server.py server_info reports every resolved server arg
                            # (utils/common.py build_server_info); with this one on, a /generate
                            # stream chunk holds only its new text (tokenizer_manager.py 2629-2650)
                            self.incremental_stream = info.get("incremental_streaming_output") is True
                            return info
            except asyncio.TimeoutError:
                raise ServerUnreachableError(
                    f"GET {path} at {self.base_url} got no answer within {timeout.total:g} s: the server "
                    "accepts connections but does not answer", timed_out=True) from None
            except (aiohttp.ClientError, OSError) as exc:
                check_own_files(exc, f"asking GET {path}")
                raise ServerUnreachableError(
                    f"no server answering at {self.base_url} ({type(exc).__name__}: {exc}); "
                    "start it first or check --url") from None
            except (ValueError, RecursionError):
                # not JSON (nested past the decoder's depth, past MAX_ANSWER_BYTES): try the other path
                continue
        return None

    async def models(self) -> Any:
        """``GET /v1/models`` (OpenAI's list, SGLang's with each model's ``max_model_len``), or None
        when the server has none or answers no JSON: a question that may go unanswered."""
        timeout = aiohttp.ClientTimeout(total=min(self.timeout_s, 30.0))
        try:
            async with self.session.get(self.base_url + "/v1/models", timeout=timeout, allow_redirects=False) as resp:
                return json.loads(await read_bounded(resp)) if resp.status == 200 else None
        except (asyncio.TimeoutError, aiohttp.ClientError, OSError, ValueError, RecursionError):
            return None  # no answer is no context length: the requests' own answers say what is wrong

    async def flush_cache(self) -> dict:
        """``POST /flush_cache``, retried while the server is busy. Never raises for HTTP answers;
        returns ``{"ok", "attempts", "status", "message", "at_s"}``. Connection failures raise
        ``aiohttp.ClientError`` so the caller can check whether the server died."""
        deadline = time.perf_counter() + FLUSH_RETRY_S
        attempts, delay = 0, 0.02
        while True:
            attempts += 1
            timeout = aiohttp.ClientTimeout(total=min(self.timeout_s, 30.0))
            async with self.session.post(self.base_url + "/flush_cache", timeout=timeout,
                                         allow_redirects=False) as resp:
                status = resp.status
                if 300 <= status < 400:  # no flush of this server's (see _exchange); not busy either
                    to = resp.headers.get("Location", "")[:200]
                    return {"ok": False, "attempts": attempts, "status": status, "at_s": self.now(),
                            "message": f"a redirect to {to!r}, not an answer"}
                try:
                    body = (await read_bounded(resp)).decode("utf-8", "replace").strip()
                except ValueError as exc:  # no flush's answer: a body without end was read whole (QA)
                    return {"ok": False, "attempts": attempts, "status": status, "message": str(exc),
                            "at_s": self.now()}
            if status == 200:
                return {"ok": True, "attempts": attempts, "status": status, "message": "", "at_s": self.now()}
            if status in (404, 405, 501):  # no such endpoint, or no POST at all: not a server that flushes
                self.flush_supported = False
                return {"ok": False, "attempts": attempts, "status": status,
                        "message": "server has no /flush_cache", "at_s": self.now()}
            if time.perf_counter() + delay > deadline:
                return {"ok": False, "attempts": attempts, "status": status,
                        "message": body[:200] or f"HTTP {status}", "at_s": self.now()}
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.5)

    async def alive(self) -> bool:
        """False only when the connection is refused (the process is gone); a server that answers
        anything, or hangs, counts as alive (its requests time out and are recorded)."""
        try:
            timeout = aiohttp.ClientTimeout(total=PROBE_TIMEOUT_S)
            async with self.session.get(self.base_url + "/health", timeout=timeout) as resp:
                await answered(resp)
            return True
        except _CONNECTION_ERRORS as exc:
            check_own_files(exc, "probing whether the server lives")  # refused, unless the tuner's own limit
            return False
        except _DISCONNECT_ERRORS:
            # A pooled keep-alive connection to a dead server fails this way; ask once more on a
            # fresh connection.
            try:
                async with aiohttp.ClientSession() as fresh:
                    async with fresh.get(self.base_url + "/health", timeout=timeout) as resp:
                        await answered(resp)
                return True
            except (aiohttp.ClientConnectorError, *_DISCONNECT_ERRORS) as exc:
                check_own_files(exc, "probing whether the server lives")
                return False
            except (aiohttp.ClientError, asyncio.TimeoutError):
                return True
        except (aiohttp.ClientError, asyncio.TimeoutError):
            return True

    async def open_connections(self, n: int) -> None:
        """Have ``n`` idle keep-alive connections ready before a sweep batch, so the batch's
        submissions are not spread out by TCP handshakes in the client's event loop. Uses
        ``GET /v1/models`` (cheap on SGLang; ``/health`` may run a generation). Failures are
        ignored: the batch itself records what goes wrong."""
        timeout = aiohttp.ClientTimeout(total=min(self.timeout_s, 10.0))

        async def touch() -> None:
            try:
                async with self.session.get(self.base_url + "/v1/models", timeout=timeout) as resp:
                    await answered(resp)
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError):
                pass

        await asyncio.gather(*(touch() for _ in range(n)))

    # ---- one request ---------------------------------------------------------------------------

    def _payload(self, text: str, max_tokens: int, rid: str,
                 messages: list[dict] | None = None) -> tuple[str, dict[str, Any]]:
        # rid: SGLang 0.5.23 takes the request's id from the client (managers/io_struct.py
        # GenerateReqInput.rid; openai/protocol.py CompletionRequest.rid, ChatCompletionRequest.rid,
        # passed on by serving_completions.py line 134 and serving_chat.py line 1395) and names it in
        # every answer and stream chunk (see _for_request).
        if self.api == "generate":
            body: dict[str, Any] = {
                "rid": rid,
                "text": text,
                "sampling_params": {"max_new_tokens": max_tokens, "temperature": self.temperature,
                                    "ignore_eos": self.ignore_eos},
            }
            if self.stream:
                body["stream"] = True
            return "/generate", body
        if self.api == "chat":
            # protocol.py ChatCompletionRequest: max_completion_tokens (max_tokens is deprecated),
            # ignore_eos as an SGLang extra; sglext.spec_tokens_details on request (sglext.py).
            path = "/v1/chat/completions"
            body = {"model": self.model, "messages": messages or [{"role": "user", "content": text}],
                    "max_completion_tokens": max_tokens, "rid": rid}
        else:
            path = "/v1/completions"
            body = {"model": self.model, "prompt": text, "max_tokens": max_tokens, "rid": rid}
        body.update({"temperature": self.temperature, "ignore_eos": self.ignore_eos, REQUEST_FIELD: True})
        if self.stream:
            body["stream"] = True
            # continuous_usage_stats: SGLang sends usage with every chunk, so ITL can be split
            # over the tokens of a chunk (serving_completions.py, serving_chat.py); include_usage
            # gives the total.
            body["stream_options"] = {"include_usage": True, "continuous_usage_stats": True}
        return path, body

    def prepare(self, text: str, max_tokens: int, messages: list[dict] | None = None) -> PreparedRequest:
        """The request's URL and JSON body, serialized ahead of time: a sweep batch serializes
        all its bodies before the first submission, so submissions are not spread out by it.
        ``messages`` are the chat turns (``api: chat``; default: one user turn holding ``text``).
        Each call draws a new request id (a ``uuid4`` hex, as SGLang draws its own): send the result
        once, since SGLang refuses an id already in flight (tokenizer_manager.py ``_init_req_state``)."""
        rid = uuid.uuid4().hex
        path, body = self._payload(text, max_tokens, rid, messages)
        # the prompt as sent, as a digest: a dataset's every row kept held no second copy of its prompts
        sent = json.dumps(body["messages"]) if self.api == "chat" else text
        prompt = hashlib.blake2b(sent.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
        return PreparedRequest(self.base_url + path, json.dumps(body).encode(), rid, prompt)

    def set_time_scale(self, scale: float) -> None:
        """The server's clock runs ``scale`` model seconds per wall second (the simulator's
        ``sim_speedup``; 1 on SGLang). ``timeout_s`` stays in model seconds."""
        self.time_scale = scale

    @property
    def wall_timeout_s(self) -> float:
        """How long to wait, in wall seconds, before giving up on a request.

        On SGLang (scale 1) this is ``timeout_s``. On a faster clock the model-time deadline is
        ``timeout_s / scale`` wall seconds, plus :data:`WALL_SLACK_S` for what the simulator's clock
        cannot speed up (HTTP, JSON, the event loop on a loaded machine): without it, a healthy
        server at 400x times out on loopback overhead alone. Whether the answer came within the
        model-time limit is then judged by the server's own latency (:meth:`_over_model_limit`).
        """
        if self.time_scale <= 1.0:
            return self.timeout_s
        return self.timeout_s / self.time_scale + WALL_SLACK_S

    def _over_model_limit(self, record: RequestRecord) -> bool:
        """An answer that arrived within the wall allowance but took longer than ``timeout_s``
        in model time by the server's own clock: a timeout at any speedup, as it would be at 1x."""
        if self.time_scale <= 1.0 or record.server_latency_s is None:
            return False
        return record.server_latency_s * self.time_scale > self.timeout_s

    async def request(self, record: RequestRecord, text: str,
                      prepared: PreparedRequest | None = None,
                      messages: list[dict] | None = None) -> RequestRecord:
        """Send one request described by ``record`` (phase, prompt, max_tokens ...) and fill in
        what happened. Never raises for a failed request.

        An answer that names another request id than this request's (:func:`_for_request`) fails it
        (``protocol``), and the requests after it go through a new session, on new connections: a server
        that sent a second answer to an earlier request on a keep-alive connection left it where aiohttp
        reads it as the next request's (QA: request 3 got request 2's answer in 1.6 ms and measured it),
        and this request's own answer, still on its way, would be the next one's. aiohttp puts a
        connection back into its pool as soon as an answer's last byte is in, before the client reads
        the id, so that connection cannot be closed alone. The old session closes when its last request
        ends (or at ``__aexit__``)."""
        url, body, rid, prompt = prepared or self.prepare(text, record.max_tokens, messages)
        session = self.session
        self._users[session] = self._users.get(session, 0) + 1
        try:
            await self._exchange(session, record, url, body, rid)
        finally:
            self._users[session] -= 1
            if session is not self._session and not self._users[session]:
                del self._users[session]
                await session.close()
        if record.ok and (problem := record.latency_problem() or self._accept_problem(record)
                          or self._same_prompt_tokens(record, prompt)):
            self._fail(record, "protocol", problem)
        if record.ok and self._over_model_limit(record):
            end_s = record.end_s
            self._fail(record, "timeout", f"answered after {record.server_latency_s * self.time_scale:.3g} "
                       f"model s, over the {self.timeout_s:g} s (model time) limit")
            record.end_s, record.late = end_s, True
        return record

    async def _exchange(self, session: aiohttp.ClientSession, record: RequestRecord, url: str, body: bytes,
                        rid: str) -> None:
        """POST ``body`` through ``session`` and read the answer into ``record``; every failure is
        recorded, none raised."""
        timeout = aiohttp.ClientTimeout(total=self.wall_timeout_s)
        record.start_s = self.now()
        try:
            # no redirect followed (aiohttp follows ten): SGLang answers every request itself, and an
            # answer from the server a redirect names is another server's, whose hangs and death the
            # client does not watch (QA: a 307 to another server's /generate was measured, exit 0)
            async with session.post(url, data=body, headers=_JSON, timeout=timeout,
                                    allow_redirects=False) as resp:
                record.http_status = resp.status
                if resp.status != 200:
                    detail = (await read_bounded(resp)).decode("utf-8", "replace").strip().replace("\n", " ")
                    # the message of a JSON error body, cut after reading it: a body cut first is no
                    # JSON (QA: SGLang's 290-character context message was kept as a cut '{"error": ...')
                    said = error_body_message(detail) or detail
                    if 300 <= resp.status < 400:
                        said = (f"a redirect to {resp.headers.get('Location', '')[:200]!r}, not an answer: "
                                "SGLang answers every request itself; give that server's URL")
                    self._fail(record, "http", f"HTTP {resp.status}: {said[:300]}")
                elif self.stream:
                    await self._read_stream(resp, record, rid)
                else:
                    self._read_answer(_json_answer(await read_bounded(resp)), record, rid)
        except _AnotherRequest as exc:
            if session is self._session:  # not yet replaced by another request's stale answer
                self._session = self._new_session()
            self._fail(record, "protocol", f"unexpected answer: {exc}")
        except asyncio.TimeoutError:
            self._fail(record, "timeout", f"no complete answer within {self.timeout_s:g} s"
                       + (" (model time)" if self.time_scale > 1.0 else ""))
        except _CONNECTION_ERRORS as exc:
            check_own_files(exc, f"sending a {record.phase} request")  # the tuner's limit, not a refusal
            self._fail(record, "connection", f"{type(exc).__name__}: {exc}")
        except _DISCONNECT_ERRORS as exc:
            check_own_files(exc, f"sending a {record.phase} request")
            if isinstance(exc.__cause__, aiohttp.http_exceptions.ContentEncodingError):
                # the answer came on a working connection, its body not in the Content-Encoding it
                # names (gzip, deflate, br): no disconnect (QA: recorded as 'disconnected', its message
                # two lines, and the server probed as if it had died)
                self._fail(record, "protocol", f"unexpected answer: its body could not be decoded: "
                           f"{exc.__cause__.message}")
            else:
                self._fail(record, "disconnected", f"{type(exc).__name__}: {exc}")
        except aiohttp.ClientResponseError as exc:
            # aiohttp's response parser refused the answer's HTTP (client_proto.py data_received: a
            # chunk size 'ZZZ', a header over 8 kB): the connection worked, the answer is no HTTP
            # (QA: recorded as 'connection', the kind for a refused connection)
            self._fail(record, "protocol", "unexpected answer: its HTTP could not be read: "
                       f"{' '.join(str(exc.message).split())[:200]}")
        except aiohttp.ClientError as exc:
            check_own_files(exc, f"sending a {record.phase} request")
            self._fail(record, "connection", f"{type(exc).__name__}: {exc}")
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            self._fail(record, "protocol", f"unexpected answer: {type(exc).__name__}: {exc}")
        except aiohttp.http_exceptions.HttpProcessingError as exc:
            # HTTP the parser refuses (a stream line past aiohttp's 2 MiB LineTooLong, a bad header):
            # no ClientError, so it used to end the whole suite in a traceback
            self._fail(record, "protocol", f"unexpected answer: {type(exc).__name__}: "
                       f"{' '.join(str(exc).split())[:200]}")
        if record.end_s == 0.0:
            record.end_s = self.now()

    def _accept_problem(self, record: RequestRecord) -> str | None:
        """Why an answer's own verify steps or accept length cannot be true whatever the setting (more
        verify steps than tokens, an accept length outside 1 to its tokens: judged only when the server
        does not say its setting, :attr:`speculation_judged`), or disagrees with its counts, or None.
        SGLang 0.5.23 computes
        ``spec_accept_length`` as ``completion_tokens / spec_verify_ct`` from the same request's figures
        (``managers/tokenizer_manager.py`` ``_calculate_spec_decoding_metrics``; ``sglext`` copies them):
        one of the three is false, and the accept column reads the ratio while the server says another.
        A count that cannot be true is left to :meth:`RequestRecord.count_problem`, which names it."""
        verify, said, n = record.spec_verify_ct, record.spec_accept_length, record.completion_tokens
        if not n or record.count_problem(self.ignore_eos):
            return None
        # Bounds whatever the setting: a verify step commits at least one token (the draft's accepted
        # tokens plus the target's own; tuner.engine.verify states the rule), so spec_verify_ct <= n and
        # SGLang's n / spec_verify_ct (sent only with spec_verify_ct > 0) lies in 1 to n. A server that
        # says its setting is judged by it, tighter (speculation_judged); one whose /server_info says
        # nothing of speculation was bounded by nothing (QA: `tuner bench` printed accept 0.10, 0.00 and
        # 50.00 for 8 tokens, exit 0).
        if not self.speculation_judged:
            if verify and verify > n:
                return (f"spec_verify_ct {verify} is more than the {counted(n, 'token')} answered: a verify "
                        "step commits at least one token")
            if said is not None and not 1 - 1e-9 <= said <= n * (1 + 1e-9):
                return (f"spec_accept_length {said:.4g} is outside 1 to the {counted(n, 'token')} answered: "
                        "it is tokens per verify step, and a verify step commits at least one")
        if not verify or said is None or math.isclose(said, n / verify, rel_tol=1e-6):
            return None
        return (f"spec_accept_length {said:.4g} is not completion_tokens / spec_verify_ct = {n} / {verify} = "
                f"{n / verify:.4g}: the server's speculative figures contradict each other")

    def _same_prompt_tokens(self, record: RequestRecord, prompt: str) -> str | None:
        """Why this answer's ``prompt_tokens`` cannot come from the server that answered the same prompt
        before, or None. SGLang 0.5.23's count is the length of the prompt's token ids, the same
        tokenizer (and, on chat, chat template) turning the same text into the same ids every time
        (``managers/tokenizer_manager.py``: ``"prompt_tokens": recv_obj.prompt_tokens[i]``, the input's
        length; a prefix-cache hit is ``cached_tokens`` and leaves it whole;
        ``openai/serving_chat.py`` ``_reported_prompt_tokens``): another count for the same prompt is
        another server (another tokenizer, template or model behind a router), answering part of the
        suite (QA: answers counting one prompt as 21 and 15 tokens in turn were measured, exit 0). The
        first answer's count is the reference; an answer without one is not judged."""
        said = record.prompt_tokens
        if said is None:
            return None
        first = self._prompt_tokens.setdefault(prompt, (said, f"{record.phase} {record.prompt}"))
        if first[0] == said:
            return None
        return (f"prompt_tokens {said} for prompt {record.prompt!r}, where an earlier answer to the same prompt "
                f"({first[1]}) said {first[0]}: one server tokenizes a prompt alike every time; another "
                "server (another tokenizer, chat template or model) answered part of the suite")

    def _fail(self, record: RequestRecord, kind: str, message: str) -> None:
        """Record a failure; ``message`` on one line (aiohttp's own messages span two: a study quotes the
        first failed request's in its trial's failure message)."""
        record.end_s = self.now()
        record.ok, record.error_kind, record.error = False, kind, " ".join(message.split())

    def _for_request(self, data: dict, rid: str) -> None:
        """:class:`_AnotherRequest` for an answer or stream chunk whose ``id`` is not ``rid``, the request
        id the client sent, once this server has named a request's own id back. SGLang 0.5.23 names the
        request's rid in every one: ``meta_info["id"]`` on ``/generate`` (``managers/tokenizer_manager.py``
        ``_handle_batch_output``: ``"id": rid``, streamed or not; ``_handle_abort_req``'s abort answer
        too), and the top-level ``id`` of every OpenAI answer and chunk, the role, text, finish,
        ``sglext`` and usage chunks alike (``openai/serving_completions.py``
        ``id=content["meta_info"]["id"]``, ``serving_chat.py`` ``chunk_id=content["meta_info"]["id"]``;
        no prefix). ``data`` is ``meta_info`` on ``/generate``, the answer or chunk on the OpenAI APIs.
        Not judged: one without ``id``, and any while the server has never named a request's own id (a
        release whose OpenAI requests take no ``rid`` names ids of its own: every request would fail)."""
        said = data.get("id")
        if said is None or said == rid:
            self.names_requests = self.names_requests or said == rid
            return
        if self.names_requests:
            raise _AnotherRequest(f"the answer is for request {str(said)[:100]!r}, not the {rid!r} sent: an "
                                  "answer to another request")

    def _read_answer(self, data: dict, record: RequestRecord, rid: str) -> None:
        """A complete (non-streamed) answer: token counts from the server, never from text. An
        answer without a finish reason fails the request, as a stream without one does."""
        record.end_s = self.now()
        _no_error(data)
        if self.api == "generate":
            meta = _object(data["meta_info"], "meta_info")
            self._for_request(meta, rid)
            self._read_meta(meta, record)
            _ids_match(data, record.completion_tokens, 0)
            text = data.get("text")
        else:
            self._for_request(data, rid)
            _for_model(data, self.model)
            self._read_usage(_object(data.get("usage") or {}, "usage"), record)
            read_spec_details(data, record)
            choice = _object((data.get("choices") or [{}])[0], "choices[0]")
            record.finish_reason = _reason(choice.get("finish_reason"))
            text = _chat_text(choice.get("message")) if self.api == "chat" else choice.get("text")
        _keep_text(record, text)
        if record.completion_tokens is None:
            raise KeyError("completion_tokens")
        if record.finish_reason is None:
            # SGLang (tokenizer_manager.py) and OpenAI answer a non-streamed request only once it
            # has finished, with its reason: an answer without one is no finished answer.
            raise ValueError(f"the answer of {counted(record.completion_tokens, 'token')} carries no finish reason")
        _has_text(isinstance(text, str), record, "answer")
        record.ok = True

    @staticmethod
    def _read_meta(meta: dict, record: RequestRecord) -> None:
        # Field names of SGLang's meta_info (tokenizer_manager.py): completion_tokens,
        # prompt_tokens, e2e_latency, finish_reason, and spec_verify_ct / spec_accept_length for
        # speculative decoding.
        record.completion_tokens = _count(meta["completion_tokens"], "completion_tokens")
        _prompt_tokens(record, _maybe_count(meta.get("prompt_tokens"), "prompt_tokens"))
        record.finish_reason = _reason(meta.get("finish_reason"))
        record.server_latency_s = _seconds(meta.get("e2e_latency"), "e2e_latency")
        # SGLang 0.5.23 under --enable-metrics, and the simulator always: arrival to the first token by
        # the server's clock (observability/req_time_stats.py convert_to_output_meta_info)
        record.server_ttft_s = _seconds(meta.get("first_token_latency"), "first_token_latency")
        if meta.get("spec_verify_ct") is not None:
            record.spec_verify_ct = _count(meta["spec_verify_ct"], "spec_verify_ct")
        if meta.get("spec_accept_length") is not None:
            record.spec_accept_length = accept_length(meta["spec_accept_length"])

    @staticmethod
    def _read_usage(usage: dict, record: RequestRecord) -> None:
        if usage.get("completion_tokens") is not None:
            record.completion_tokens = _count(usage["completion_tokens"], "completion_tokens")
        if usage.get("prompt_tokens") is not None:
            _prompt_tokens(record, _count(usage["prompt_tokens"], "prompt_tokens"))
        if usage.get("spec_verify_ct") is not None:
            record.spec_verify_ct = _count(usage["spec_verify_ct"], "spec_verify_ct")

    @staticmethod
    async def _stream_line(resp: aiohttp.ClientResponse, done_s: float | None) -> bytes:
        """The stream's next line (``b""`` at its end). After ``[DONE]`` it must end within
        :data:`AFTER_DONE_S`, or ``ValueError``: a server that held it open made the request wait out its
        whole timeout, recorded as ``timeout`` (no complete answer) though the answer had come, and two
        such steps in a row read as a hung server."""
        if done_s is None:
            return await resp.content.readline()
        try:
            return await asyncio.wait_for(resp.content.readline(), AFTER_DONE_S)
        except asyncio.TimeoutError:
            raise ValueError(f"the stream stayed open {AFTER_DONE_S:g} s after data: [DONE]: SGLang ends "
                             "it there") from None

    async def _read_stream(self, resp: aiohttp.ClientResponse, record: RequestRecord, rid: str) -> None:
        """Server-sent events. ``/generate`` sends cumulative text (new text only under SGLang's
        ``--incremental-streaming-output``) and meta_info; OpenAI sends text
        deltas and (with include_usage) usage. Inter-token latency of a chunk carrying k new tokens
        is its gap split evenly over the k tokens, as SGLang's bench_serving does.

        SSE comments (``: keep-alive``, which proxies add) and ``event:``/``id:``/``retry:`` fields
        are skipped. A stream that ends without a finish reason was cut short (SGLang and OpenAI
        send one in the last chunk): the request fails, whatever its count says; so does one that ends
        without ``data: [DONE]`` or sends anything after it, and a ``/generate`` stream whose text so far
        does not continue the last chunk's. The request ends at ``[DONE]``; the rest of the body is read
        (SGLang closes it right after; :data:`AFTER_DONE_S` at most) to see that nothing follows."""
        last_t = 0.0
        last_tokens = 0
        text = ""
        guessed = 0  #: text chunks counted as one token each (no per-chunk usage from the server)
        carried = False  #: whether any chunk carried text (an empty piece counts)
        peak = 0  #: the highest completion_tokens a chunk has said so far
        done_s = None  #: when ``data: [DONE]`` came (the request's end)
        #: /v1/completions: the count the last chunk with a choice said (continuous_usage_stats), if any
        choice_count: int | None = None
        ids = 0  #: /generate under --incremental-streaming-output: the output_ids the chunks carried so far
        read = 0  #: bytes of the stream read so far, as lines
        #: bytes of the stream received when the first token's line was read, and read up to the end of
        #: the last line that brought tokens: every token came in that receive when the second <= the first
        first_in, last_token_at = None, 0
        while raw := await self._stream_line(resp, done_s):
            read += len(raw)
            line = raw.strip()
            if not line or line.startswith(_SSE_SKIPPED):
                continue
            if line.startswith(b"data:"):
                line = line[5:].strip()
            if done_s is not None:
                # SGLang 0.5.23 ends every stream with [DONE] and sends nothing after it (http_server.py
                # stream_results, openai/serving_completions.py, serving_chat.py): what follows is an
                # answer the client would not have read (QA: a chunk of 18 tokens for 8 asked, exit 0)
                raise ValueError(f"the stream went on after data: [DONE] with {_quoted(line)}: which of "
                                 "its answers is the request's is unknown")
            if line == b"[DONE]":
                done_s = self.now()
                continue
            data = _json_answer(line)
            _no_error(data)
            now = self.now()
            finished = record.finish_reason is not None  #: a chunk before this one said why it ended
            if self.api == "generate":
                if finished:
                    # SGLang 0.5.23 yields a request's finished output last (tokenizer_manager.py
                    # _wait_one_response: break once state.finished; http_server.py stream_results then
                    # sends [DONE]): a chunk after it is no part of the answer it finished
                    raise _went_on(line)
                meta = _object(data["meta_info"], "meta_info")
                self._for_request(meta, rid)
                before = record.completion_tokens
                verified = record.spec_verify_ct, record.spec_accept_length  # the chunks' before this one
                self._read_meta(meta, record)
                _speculated_so_far(meta, *verified, record.spec_verify_ct)
                ids = _ids_match(data, record.completion_tokens, ids if self.incremental_stream else 0)
                tokens = record.completion_tokens or 0
                piece = data.get("text")
                if self.incremental_stream:  # new text alone: a chunk sent twice doubles it
                    _no_text_without_a_token(piece, before, record.completion_tokens)
                if isinstance(piece, str):  # cumulative, or new text only (incremental_stream)
                    if not self.incremental_stream and not piece.startswith(text):
                        # SGLang appends each chunk's new text to the request's (tokenizer_manager.py
                        # _handle_batch_output, state.append_text): the text so far only grows. A chunk
                        # that is not the last one's text plus more is new text alone (a server under
                        # --incremental-streaming-output whose /server_info does not say so) or a lie:
                        # the text kept for the lossless check would be the last chunk's alone.
                        raise ValueError(f"the stream's text went from {len(text)} characters to "
                                         f"{_quoted(piece.encode())}, which does not continue it: "
                                         "/generate streams the text so far "
                                         "(new text only under --incremental-streaming-output, which "
                                         "/server_info does not report)")
                    text = text + piece if self.incremental_stream else piece
                    carried = True
            else:
                self._for_request(data, rid)
                _for_model(data, self.model)
                before = record.completion_tokens
                usage = _object(data.get("usage") or {}, "usage")
                self._read_usage(usage, record)
                read_spec_details(data, record)  # the sglext chunk (choices: [])
                choices = [_object(c, "choices[0]") for c in (data.get("choices") or [])[:1]]
                if choices and choices[0].get("finish_reason"):
                    record.finish_reason = _reason(choices[0]["finish_reason"])
                delta = _chat_text(choices[0].get("delta")) if self.api == "chat" and choices else (
                    choices[0].get("text") if choices else None)
                if finished and (delta or (choices and choices[0].get("finish_reason"))):
                    # SGLang 0.5.23 sends a choice's finish reason with its last text
                    # (serving_completions.py) or in a chunk of its own after all text (serving_chat.py);
                    # only the sglext and usage chunks (choices: []) follow it. Text or a second finish
                    # after it joined the answer (QA: 'abcdefgh' then 'ZZZ' with finish stop, kept)
                    raise _went_on(line)
                if usage.get("completion_tokens") is not None:
                    if self.api == "openai":
                        _no_text_without_a_token(delta, before, record.completion_tokens)
                    if choices:
                        choice_count = record.completion_tokens
                    elif not finished and record.completion_tokens > (choice_count or 0):
                        # SGLang 0.5.23 sends its chunks without a choice (sglext, the final usage) after
                        # every output's chunk, the finish reason's included (serving_completions.py: after
                        # the generate loop; serving_chat.py: after the finish chunks): one before it
                        # counts tokens no text came with yet, and the time to the first token was read
                        # at it (QA: the final usage sent first, then the text: TTFT 1 ms for a first
                        # token 10 ms later, measured, exit 0; on chat alike)
                        raise ValueError(f"a chunk without a choice said completion_tokens "
                                         f"{record.completion_tokens} before the finish reason, where the "
                                         f"stream's text chunks had counted {choice_count or 0}: the usage "
                                         "comes after the text")
                    elif (self.api == "openai" and choice_count is not None
                          and record.completion_tokens > choice_count):
                        # SGLang 0.5.23 sends a chunk for every output it yields, each with the count so
                        # far (continuous_usage_stats), and its final usage is the last one's count
                        # (openai/serving_completions.py: completion_tokens[index], sent again): another
                        # count there is tokens no chunk carried (QA: 4 chunks of text, final usage 8, its
                        # last 4 gaps 8 us apiece, measured, exit 0)
                        raise ValueError(f"the final usage says completion_tokens "
                                         f"{record.completion_tokens}, where the stream's text chunks counted "
                                         f"{choice_count}: tokens no chunk carried")
                text += delta or ""
                has_text = bool(delta)
                carried = carried or isinstance(delta, str)
                # Without per-chunk usage, a text chunk stands for one token (timing only; the
                # count comes from the final usage).
                tokens = record.completion_tokens if record.completion_tokens is not None else (
                    last_tokens + (1 if has_text else 0))
                guessed += record.completion_tokens is None and has_text
            if len(text) > MAX_ANSWER_BYTES:
                # the stream's own bound, as read_bounded's for a whole answer: each line is capped
                # (aiohttp's 2 MiB), their sum was not (QA: a server streaming 400 kB deltas without
                # end held 900 MB in one request's 15 s, the whole suite timeout's worth: 18 GB)
                raise ValueError(f"the stream's text passed the {MAX_ANSWER_BYTES // 2**20} MiB an answer "
                                 "can need")
            if record.completion_tokens is not None:
                # SGLang's counts in a stream are the request's so far (meta_info and continuous
                # usage alike: tokenizer_manager.py, openai/serving_completions.py): they never fall.
                # One that falls makes every gap and the TTFT a guess.
                if record.completion_tokens < peak:
                    raise ValueError(f"completion_tokens went back from {peak} to {record.completion_tokens} "
                                     "within the stream: its counts are not the answer's so far")
                # Nor past max_tokens (count_problem's rule, checked here before the gap is split over
                # the new tokens: a chunk claiming 10^8 made a list of 10^8 gaps, 13.8 GB in one run).
                if record.completion_tokens > record.max_tokens:
                    raise ValueError(f"completion_tokens {record.completion_tokens} is over the "
                                     f"{record.max_tokens} asked, within the stream")
                peak = record.completion_tokens
            new = tokens - last_tokens
            if new <= 0:
                continue
            if tokens > record.max_tokens:
                # only a guessed count gets here (a said one is refused above): more text chunks than
                # the tokens asked, so the guess is wrong and the gaps are dropped at the end; a gap
                # kept per chunk grew without bound in a stream that never ended (one float a chunk)
                last_t, last_tokens = now, tokens
                continue
            last_token_at = read
            if record.ttft_s is None:
                record.ttft_s = now - record.start_s
                first_in = getattr(resp.content, "total_bytes", None)  # aiohttp's count of bytes received
                new -= 1  # the first token is the TTFT, not an inter-token gap
            elif new > 0:
                record.itl_s.extend([(now - last_t) / new] * new)
            last_t, last_tokens = now, tokens
        record.end_s = self.now() if done_s is None else done_s
        _keep_text(record, text)
        if record.completion_tokens is None:
            raise KeyError("completion_tokens (no usage in the stream)")
        if record.finish_reason is None:
            raise ValueError(f"the stream ended after {counted(record.completion_tokens, 'token')} without a finish "
                             "reason: the answer was cut short")
        if done_s is None:
            # the finish reason comes before the OpenAI streams' sglext and usage chunks, so a stream cut
            # after it may have lost its verify steps and final count (QA: a clean close, exit 0)
            raise ValueError(f"the stream of {counted(record.completion_tokens, 'token')} ended without "
                             "data: [DONE]: the answer may have been cut short")
        _has_text(carried, record, "stream")
        if first_in is not None and last_token_at <= first_in and record.completion_tokens > 1:
            # Every token after the first was already received when the first was read (a server or
            # proxy that sent the whole reply in one write, a client that fell behind it): no gap between
            # them was seen, so the time per token is unknown, not the microseconds between reading
            # lines already in (QA: TPOT 0.015 ms, ITL p50 0.008 ms and every request good under a
            # 1 ms TPOT limit, for a stream sent whole after 50 ms).
            record.itl_s.clear()
            record.gaps_unseen = True
        if guessed and guessed != record.completion_tokens:
            # Chunks of several tokens and the count only at the end (a server that ignores
            # continuous_usage_stats): which gap belongs to which token is unknown, and spreading
            # the final jump over the last gap would report gaps of microseconds. No ITL, rather
            # than a wrong one (an ITL limit then reads "not measured").
            record.itl_s.clear()
        record.ok = True


_JSON = {"Content-Type": "application/json"}
#: The most of one answer (or error page) the client holds: an SGLang answer of 2,048 tokens is tens
#: of kB; a server that sends more is not answering the request (QA: a 100 MB answer was read whole,
#: for every request in flight: 32 of them at C=32 would hold 3.2 GB).
MAX_ANSWER_BYTES = 16 * 2**20


async def read_bounded(resp, limit: int = MAX_ANSWER_BYTES) -> bytes:
    """The body of ``resp``, or ``ValueError`` once it passes ``limit`` bytes (no more is read).
    Every body the bench reads goes through it: the answers, ``/server_info``, ``/flush_cache`` and
    the probes (:func:`answered`; the watchdog's, :mod:`tuner.bench.watch`)."""
    if resp.content_length is not None and resp.content_length > limit:
        raise ValueError(f"the answer is {resp.content_length} bytes, over the {limit // 2**20} MiB "
                         "an answer can need")
    parts, size = [], 0
    async for part in resp.content.iter_chunked(1 << 16):
        size += len(part)
        if size > limit:
            raise ValueError(f"the answer passed the {limit // 2**20} MiB an answer can need")
        parts.append(part)
    return b"".join(parts)


async def answered(resp) -> None:
    """Read a probe's answer (``/health``, ``/v1/models``), whose body only says that the server
    answered: at most :data:`MAX_ANSWER_BYTES` of it (past that it answered all the same; the
    connection is then closed, not reused). A body without end was read until the probe's timeout
    (QA: 1.5 GB in the 3 s of one liveness probe, 3 GB warming four connections for a batch)."""
    try:
        await read_bounded(resp)
    except ValueError:
        resp.close()


#: SSE lines that carry no data: comments (a proxy's ``: keep-alive``) and the other fields
_SSE_SKIPPED = (b":", b"event:", b"id:", b"retry:")


def _json_answer(body: bytes) -> dict:
    """An answer's JSON object; ``ValueError`` quoting the start of anything else (an HTML page, a
    list), so the record says what the server sent rather than a decoder's complaint."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        # RecursionError: JSON nested deeper than the decoder's recursion limit (``[[[...``, a few
        # hundred kB); no SGLang answer nests past four levels, and it used to end the whole suite in
        # a traceback. The start only, not the whole body: 100 MB of words split into a list held 1.5 GB
        text = " ".join(body[:1000].decode("utf-8", "replace").split())
        raise ValueError(f"the answer is not JSON: {text[:200]!r}") from None
    if not isinstance(data, dict):
        raise ValueError(f"the answer is a JSON {type(data).__name__}, not an object: {str(data)[:200]}")
    return data


def _for_model(data: dict, asked: str) -> None:
    """``ValueError`` for an OpenAI answer (or chunk) that names another model than the request's: SGLang
    0.5.23 names the request's own in every one (``openai/serving_completions.py``, ``serving_chat.py``:
    ``model=request.model``), so it answers another request (a router's, a cache's). One without
    ``model`` is not judged."""
    said = data.get("model")
    if said is not None and said != asked:
        raise ValueError(f"the answer is for model {str(said)[:100]!r}, not the {asked[:100]!r} asked: "
                         "an answer to another request")


class _AnotherRequest(ValueError):
    """An answer (or stream chunk) that names another request than the one sent."""


def _no_text_without_a_token(piece: Any, before: int | None, now: int | None) -> None:
    """``ValueError`` for a stream chunk of new text whose count says no new token since the chunk
    before (both counted): a chunk sent twice (a proxy's or a server's retransmission), or text no
    token produced. Only where each chunk carries new text alone (OpenAI ``/v1/completions``, and
    ``/generate`` under ``--incremental-streaming-output``): SGLang 0.5.23 yields a request's output
    only when it has new tokens (``managers/tokenizer_manager.py`` ``_wait_one_response``), and with
    ``continuous_usage_stats`` each completions chunk carries the count so far
    (``openai/serving_completions.py``), so text comes with a higher count. QA: a completions chunk sent
    twice kept ``' w0 w1 w2 w2 w3 ...'`` (17 words for 16 tokens) as the answer, exit 0, and the
    lossless check would blame the setting for the server's repetition. Not judged on chat, whose
    reasoning and tool-call parsers may hold text back and send it later."""
    if isinstance(piece, str) and piece and before is not None and now is not None and now <= before:
        raise ValueError(f"the stream sent text {_quoted(piece.encode())} without a new token "
                         f"(completion_tokens stayed {now}): a chunk sent twice, or text no token produced")


def _ids_match(data: dict, said: int | None, before: int) -> int:
    """The output token ids a ``/generate`` answer (or stream chunk) carried, with ``before`` of the chunks
    before it (new ids only: ``--incremental-streaming-output``; 0 otherwise); ``ValueError`` when they
    are not ``said``, its ``completion_tokens``, or are no list. SGLang 0.5.23 sends ``output_ids`` in
    every one, the request's ids so far (new ones alone when incremental), and counts
    ``completion_tokens`` as their length (``managers/tokenizer_manager.py`` ``_handle_batch_output``:
    ``"output_ids": state.output_ids``; the abort answer's ``len(output_ids)``, line 3628): another
    length is a count for other tokens than the ones answered (QA: 3 ids for 8 tokens, measured, exit 0).
    One without ``output_ids`` is not judged."""
    got = data.get("output_ids")
    if got is None or said is None:
        return before
    if not isinstance(got, list):
        raise ValueError(f"output_ids {repr(got)[:100]} is not a list of token ids")
    if before + len(got) != said:
        raise ValueError(f"the answer carries {counted(before + len(got), 'output token id')} for "
                         f"completion_tokens {said}: SGLang counts the ids it sends")
    return before + len(got)


def _speculated_so_far(meta: dict, verify_before: int | None, accept_before: float | None,
                       verify_now: int | None) -> None:
    """``ValueError`` for a ``/generate`` stream chunk whose speculative figures are not the request's so
    far: ``spec_verify_ct`` lower than a chunk before said, or either figure missing where a chunk before
    said it. SGLang 0.5.23 puts the request's verify steps so far in every chunk's ``meta_info`` (its
    ``spec_verify_ct`` counts up over the request, ``managers/schedule_batch.py``; ``tokenizer_manager.py``
    ``_calculate_spec_decoding_metrics`` adds both figures to every output once that count is above 0), so
    the last chunk's are the whole answer's. QA: a chunk at 4 tokens saying 1 verify step, the finished
    chunk at 8 saying none, was measured with the stale step: accept length 8.0, exit 0; one whose count
    fell from 3 to 2 read 4.0."""
    for key, before in (("spec_verify_ct", verify_before), ("spec_accept_length", accept_before)):
        if before is not None and meta.get(key) is None:
            raise ValueError(f"the stream's chunks said {key} {before:.4g}, then a chunk said none: SGLang sends "
                             "the request's figures so far in every chunk, so the answer's would be an "
                             "earlier chunk's")
    if verify_before is not None and verify_now is not None and verify_now < verify_before:
        raise ValueError(f"spec_verify_ct went back from {verify_before} to {verify_now} within the stream: "
                         "its counts are the request's verify steps so far")


def _went_on(line: bytes) -> ValueError:
    """The error for a stream chunk that carries text or a finish reason after its finish reason."""
    return ValueError(f"the stream went on after its finish reason with {_quoted(line)}: which text is "
                      "the answer is unknown")


def _quoted(line: bytes) -> str:
    """The start of a stream line, quoted on one line."""
    return repr(" ".join(line[:200].decode("utf-8", "replace").split())[:80])


def _object(value: Any, what: str) -> dict:
    """``value`` when it is a JSON object; ``ValueError`` naming ``what`` and quoting it otherwise: an
    OpenAI answer's ``usage`` and each of its ``choices`` are objects (SGLang 0.5.23
    ``openai/protocol.py``: ``UsageInfo``, ``CompletionResponseChoice``, ...), and anything else would
    end the run in an ``AttributeError`` rather than fail the request."""
    if not isinstance(value, dict):
        raise ValueError(f"{what} {repr(value)[:200]} is not a JSON object")
    return value


def error_body_message(body: str) -> str | None:
    """The message of an error body as SGLang 0.5.23 sends them, or None for any other text:
    ``{"error": {"message": M}}`` (``srt/entrypoints/http_server.py``), the OpenAI endpoints'
    ``ErrorResponse`` ``{"object": "error", "message": M}`` (``srt/entrypoints/openai/protocol.py``),
    FastAPI's own ``{"detail": M}``. Whitespace collapsed to one line."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    said = data.get("error", data) if isinstance(data, dict) else None
    said = said.get("message", said.get("detail")) if isinstance(said, dict) else said
    return " ".join(said.split()) if isinstance(said, str) and said.strip() else None


def _no_error(data: dict) -> None:
    """An error answered with HTTP 200 (SGLang's ``{"error": ...}``, OpenAI's ``{"object": "error",
    "message": ...}``): ``ValueError`` quoting the server's own message."""
    error = data.get("error")
    if error or data.get("object") == "error":
        detail = error.get("message", error) if isinstance(error, dict) else (error or data.get("message"))
        raise ValueError(f"the server answered with an error: {str(detail)[:300]}")


def _count(value: Any, what: str) -> int:
    """A token count as the server sent it: a whole number, never negative (a bool, a fraction or a
    negative number is no count: ``ValueError``)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} {value!r} is not a count of tokens")
    return value


def _prompt_tokens(record: RequestRecord, said: int | None) -> None:
    """Keep an answer's (or stream chunk's) ``prompt_tokens``; ``ValueError`` when a stream's chunks say
    two counts: SGLang 0.5.23 sends the same input length in every chunk of one request (``meta_info``
    on ``/generate``; the continuous and final usage of ``openai/serving_completions.py`` and
    ``serving_chat.py``), so two are two requests' answers in one stream."""
    if said is None:
        return
    if record.prompt_tokens is not None and said != record.prompt_tokens:
        raise ValueError(f"prompt_tokens went from {record.prompt_tokens} to {said} within the stream: one "
                         "request's input has one length")
    record.prompt_tokens = said


def _maybe_count(value: Any, what: str) -> int | None:
    """None, or a count (:func:`_count`, which raises ``ValueError`` for text, a fraction, a bool)."""
    return None if value is None else _count(value, what)


def _seconds(value: Any, what: str) -> float | None:
    """A duration as the server sent it: None, or a finite number of seconds, never negative
    (text, a bool, NaN or a negative number is no duration: ``ValueError``)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} {value!r} is not a duration in seconds")
    return float(value)


def _has_text(carried: bool, record: RequestRecord, what: str) -> None:
    """``ValueError`` for an answer (or stream) that carried no text at all: SGLang 0.5.23 always
    sends it (``/generate``: ``text`` in every answer and stream chunk, ``tokenizer_manager.py``
    ``_handle_batch_output``; OpenAI: ``choices[].text`` / ``message.content`` / ``delta``,
    ``openai/serving_completions.py``, ``serving_chat.py``; the tuner refuses
    ``skip_tokenizer_init``, which alone drops it). Without it the lossless check compares nothing
    and ``bench.lossless.enforce`` passes whatever the server generated; an empty text is text."""
    if not carried:
        raise ValueError(f"the {what} of {counted(record.completion_tokens, 'token')} carries no text: the lossless "
                         "check could not compare it")


def _keep_text(record: RequestRecord, text: Any) -> None:
    """The output text of a single request, for the lossless check (sweep outputs are not kept:
    they would grow every suite result by megabytes and nothing compares them)."""
    if record.phase == "single" and isinstance(text, str):
        record.output_text = text


def _chat_text(part: Any) -> str | None:
    """The text a chat answer's ``message`` (or a stream chunk's ``delta``) carries: its
    ``reasoning_content`` then its ``content``. A server launched with ``--reasoning-parser`` splits
    what the model generated between the two (SGLang 0.5.23 ``openai/serving_chat.py``: the request's
    ``separate_reasoning`` defaults to true, ``protocol.py`` line 1018; ``content`` is ``""`` when the
    reasoning fills ``max_tokens``, lines 2994-3004; streamed, ``delta.reasoning_content`` chunks,
    lines 975-1001), so ``content`` alone is not the output the lossless check compares. None when
    the part carries neither (a role or finish chunk)."""
    if not isinstance(part, dict):
        return None
    pieces = [p for p in (part.get("reasoning_content"), part.get("content")) if isinstance(p, str)]
    return "".join(pieces) if pieces else None


def _reason(value: Any) -> str | None:
    """SGLang's finish_reason is a dict ({"type": "length", ...}); OpenAI's is a string. A type that
    is no string (a number, a list, an object) raises ``ValueError``.

    ``abort`` raises ``ValueError`` quoting the server's message: SGLang answers a request its
    scheduler aborted with HTTP 200 and that reason (``tokenizer_manager.py``: an abort without a
    400/500/503 status code is yielded as a finished answer, and a streamed 400 abort too; the
    OpenAI APIs pass the type on as ``"abort"``), after however many tokens it had. That answer is
    cut short, not a measurement of the request."""
    detail = None
    if isinstance(value, dict):
        value, detail = value.get("type"), value.get("message")
    if value is not None and not isinstance(value, str):
        # SGLang 0.5.23's reasons are strings (managers/schedule_batch.py: every FINISH_* to_json's
        # "type"; openai/protocol.py: finish_reason Optional[Literal["stop", "length", ...]]); anything
        # else was kept in the record as the reason (QA: [1, 2], an answer that says no reason, measured)
        raise ValueError(f"finish_reason {str(value)[:100]} is not a reason")
    if value == "abort":
        raise ValueError("the server aborted the request (finish reason abort"
                         + (f": {str(detail)[:300]}" if detail else "") + "): the answer was cut short")
    return value
