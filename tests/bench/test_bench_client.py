"""The client and runner against a tiny SGLang-like aiohttp server in this file (real HTTP on
127.0.0.1, port 0): the request formats, token counts from the server, streaming, flushes, failures.
Tests against the simulator as a real process are in test_bench_sim.py."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest
from aiohttp import web
from click.testing import CliRunner

from tuner.bench import HangPolicy, ServerDiedError, ServerUnreachableError, SuiteResult, run_suite
from tuner.bench.stats import narrow_enough
from tuner.cli import cli
from tuner.config.suite import load_suite
from tuner.sglang.rules import SpecConfig

SUITE = {
    "name": "tiny",
    "prompts": [{"name": "fib", "text": "def fib(n):"}, {"name": "haiku", "text": "autumn leaves"}],
    "single": {"lengths": [8, 16], "repeats": 2},
    "sweep": {"concurrencies": [1, 4], "max_tokens": 8},
    "warmup": {"requests": 1, "max_tokens": 2},
    # model seconds: the fake reports sim_speedup 100, so the client waits 5 wall seconds
    "timeout_s": 500,
}


class FakeSGLang:
    """SGLang's HTTP surface, just enough for the client: /generate (+stream), /v1/completions,
    /server_info, /flush_cache, /health. Each token takes ``token_s`` wall seconds; the text is
    deliberately not one word per token, so a client that counted words would be wrong.

    Knobs: ``busy_flushes`` (answer 400 that many times first, as SGLang does with requests
    running), ``fail_prompt`` (HTTP 500 for that prompt), ``hang_prompt`` (never answers),
    ``die_after`` (after that many generation requests, the server stops listening and drops the
    connection), ``info_paths`` (which server-info paths exist), ``verify_every`` (spec_verify_ct),
    ``lie`` (how /generate misbehaves: ``more`` or ``negative`` token counts, ``error200`` and
    ``html200`` bodies with HTTP 200, a stream with ``sse_fields`` (comments, event and id lines: legal
    SSE) or ``cut`` short without a finish reason, ``abort``: half the tokens with finish reason
    ``abort``, HTTP 200, streamed or not, as SGLang answers a request its scheduler aborted;
    /v1/completions streams ``chunky``: four tokens a chunk and the count only at the end; ``no_text``:
    every answer and stream chunk without its text, counts and finish reasons intact; ``capped``: three
    tokens fewer than asked with finish reason ``length``, as SGLang's scheduler answers a request whose
    max_new_tokens it lowered; streams with ``no_done`` (no ``[DONE]``, a clean close after the finish),
    ``after_done`` (a chunk after it) or ``done_twice``; ``deltas``: /generate streams new text only,
    /server_info not saying so; ``accept_off``: spec_accept_length one more than its counts give;
    ``prompt_text``: prompt_tokens ``"lots"``).
    """

    def __init__(self, *, token_s=0.0005, busy_flushes=0, fail_prompt=None, hang_prompt=None,
                 die_after=None, info_paths=("/server_info",), verify_every=2, info=None, lie=None):
        self.lie = lie
        self.token_s, self.busy_flushes = token_s, busy_flushes
        self.fail_prompt, self.hang_prompt, self.die_after = fail_prompt, hang_prompt, die_after
        self.info_paths, self.verify_every = info_paths, verify_every
        self.info = info if info is not None else {
            "version": "0.5.23-fake", "model_path": "fake/model", "sim_speedup": 100.0,
            "speculative_algorithm": "EAGLE3", "speculative_num_steps": 1,
            "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 3,
            "internal_states": [{"speculative_num_draft_tokens": 2, "avg_spec_accept_length": 2.0}],
        }
        self.bodies: list[tuple[str, dict]] = []  # (path, JSON body) of every generation request
        self.events: list[str] = []  # "flush" / "flush-busy" / "gen" in arrival order
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
            asyncio.run_coroutine_threadsafe(self._stop(), self._loop).result(timeout=10)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
            self._loop.close()

    async def _start(self):
        app = web.Application()
        for path in self.info_paths:
            app.router.add_get(path, self._server_info)
        app.router.add_post("/generate", self._generate)
        app.router.add_post("/v1/completions", self._completions)
        app.router.add_post("/flush_cache", self._flush)
        app.router.add_get("/health", self._health)
        self._runner = web.AppRunner(app, shutdown_timeout=0.1)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]

    async def _stop(self):
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()
        # handlers still running past cleanup's shutdown_timeout (a stream the client dropped): ended
        # here, not left pending in a closed loop, where the garbage collector later logs "Task was
        # destroyed but it is pending!" in whatever test runs then (CI: test_signal_in_stage_callback)
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)

    async def _health(self, request):
        return web.Response(text="ok")

    async def _server_info(self, request):
        return web.json_response(self.info)

    async def _flush(self, request):
        if self.busy_flushes > 0:
            self.busy_flushes -= 1
            self.events.append("flush-busy")
            return web.Response(status=400, text="Flush cache failed: requests are running.")
        self.events.append("flush")
        return web.Response(text="Cache flushed.")

    async def _admit(self, request, path) -> tuple[dict, str]:
        body = await request.json()
        self.bodies.append((path, body))
        self.events.append("gen")
        prompt = body.get("text") or body.get("prompt") or ""
        n = len(self.bodies)
        if self.die_after is not None and n > self.die_after:
            asyncio.get_running_loop().create_task(self._stop())
            request.transport.close()
            raise asyncio.CancelledError
        if self.hang_prompt and self.hang_prompt in prompt:
            await asyncio.sleep(30)
        return body, prompt

    def _meta(self, tokens: int, rid: str | None) -> dict:
        count = {"more": tokens + 3, "negative": -tokens,
                 "huge": 10**12 if tokens > 2 else tokens}.get(self.lie, tokens)
        reason = None if self.lie == "nofinish" else {"type": "length", "length": tokens}
        if self.lie == "abort":  # tokenizer_manager.py: a scheduler abort without a status code is a 200
            reason = {"type": "abort", "message": "Abort in waiting queue"}
        e2e = {"e2e_zero": 0, "e2e_text": "fast", "e2e_nan": float("nan"), "e2e_long": 50.0}.get(
            self.lie, tokens * self.token_s)
        prompt_tokens = "lots" if self.lie == "prompt_text" else 5
        meta = {"id": rid, "prompt_tokens": prompt_tokens, "completion_tokens": count,
                "finish_reason": reason, "e2e_latency": e2e}
        if self.verify_every:
            verify = 1 if self.lie == "one_verify" else -(-tokens // self.verify_every)
            meta.update(spec_verify_ct=verify, spec_accept_length=tokens / verify if verify else 0)
            if self.lie == "accept_off":
                meta["spec_accept_length"] += 1
            if self.lie in ("accept_text", "accept_true", "accept_inf"):  # and no verify count to judge by
                del meta["spec_verify_ct"]
                meta["spec_accept_length"] = {"accept_text": "2.5", "accept_true": True,
                                              "accept_inf": float("inf")}[self.lie]
        return meta

    async def _generate(self, request):
        body, prompt = await self._admit(request, "/generate")
        rid = body.get("rid")  # meta_info.id is the request's rid (tokenizer_manager.py)
        if self.fail_prompt and self.fail_prompt in prompt:
            return web.json_response({"error": {"message": "selected index k out of range"}}, status=500)
        n = body["sampling_params"]["max_new_tokens"]
        if self.lie == "context4" and n > 4:  # SGLang's 400 for a request over the context length
            return web.json_response({"error": {"message": "Requested token count exceeds the model's "
                                                           "maximum context length"}}, status=400)
        if self.lie == "error200":
            return web.json_response({"error": {"message": "KV cache exhausted, retry later"}})
        if self.lie == "html200":
            return web.Response(text="<html><body>Bad gateway</body></html>", content_type="text/html")
        if self.lie in ("oversize", "oversize_chunked"):  # a JSON answer of 17 MiB, its length said or not
            big = web.json_response({"text": "x" * (17 * 2**20), "output_ids": [1],
                                     "meta_info": self._meta(1, rid)})
            if self.lie == "oversize":
                return big
            resp = web.StreamResponse(headers={"Content-Type": "application/json"})
            await resp.prepare(request)
            for i in range(0, len(big.body), 1 << 20):
                await resp.write(big.body[i:i + (1 << 20)])
            return resp
        if self.lie == "abort":
            n = max(1, n // 2)  # aborted halfway
        if self.lie == "capped":
            n = max(1, n - 3)  # scheduler.py init_req_max_new_tokens lowered it; finish "length" at it
        if not body.get("stream"):
            await asyncio.sleep(n * self.token_s)
            if self.lie == "no_text":
                return web.json_response({"output_ids": list(range(n)), "meta_info": self._meta(n, rid)})
            answer = {"text": "x y " * n, "output_ids": list(range(n)), "meta_info": self._meta(n, rid)}
            if self.lie in ("more", "negative", "huge"):  # a count lie alone: ids that agree, or none
                answer["output_ids"] = list(range(n + 3)) if self.lie == "more" else None
            return web.json_response(answer)
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        for done in range(2, n + 2, 2):  # two tokens per chunk, as with an accept length of 2
            done = min(done, n)
            if self.lie == "cut" and done > n // 2:
                return resp  # the stream ends early, cleanly, with no finish reason and no [DONE]
            await asyncio.sleep(2 * self.token_s)
            meta = self._meta(done, rid)
            if done < n:
                meta["finish_reason"] = None  # SGLang sets it on the last chunk only
            if self.lie == "backwards" and done == 2:  # the first chunk claims more than the next
                meta["completion_tokens"] = n
            if self.lie == "sse_fields":
                await resp.write(b": keep-alive\n\nevent: message\nid: 7\n")
            chunk = {"text": f"d{done} " if self.lie == "deltas" else "x y " * done, "meta_info": meta}
            if self.lie == "no_text":
                del chunk["text"]
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await self._done(resp, {"text": "x y " * (n + 5), "meta_info": self._meta(n + 5, rid)})
        return resp

    async def _done(self, resp, more: dict) -> None:
        """A stream's end: ``[DONE]``, or the lies about it (``more`` is what ``after_done`` sends)."""
        if self.lie != "no_done":
            await resp.write(b"data: [DONE]\n\n")
        if self.lie == "after_done":
            await resp.write(f"data: {json.dumps(more)}\n\n".encode())
        if self.lie == "done_twice":
            await resp.write(b"data: [DONE]\n\n")

    async def _completions(self, request):
        body, _ = await self._admit(request, "/v1/completions")
        n = body["max_tokens"] - (3 if self.lie == "capped" else 0)
        await asyncio.sleep(n * self.token_s)
        usage = {"prompt_tokens": "lots" if self.lie == "prompt_text" else 5, "completion_tokens": n,
                 "total_tokens": n + 5}
        if self.lie == "usage_list":
            usage = [n]
        if not body.get("stream"):
            reason = {"nofinish": None, "abort": "abort"}.get(self.lie, "length")
            choice = {"index": 0, "text": "z " * n, "finish_reason": reason}
            if self.lie == "no_text":
                del choice["text"]
            if self.lie == "choice_text":
                choice = "z " * n
            return web.json_response({"id": body.get("rid"), "object": "text_completion", "usage": usage,
                                      "choices": [choice]})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        per_chunk = 4 if self.lie == "chunky" else 1  # chunky: several tokens a chunk, no per-chunk usage
        for i in range(0, n, per_chunk):
            await asyncio.sleep(self.token_s * per_chunk)
            last = i + per_chunk >= n
            chunk = {"choices": [{"index": 0, "text": "z " * per_chunk, "finish_reason": "length" if last else None}]}
            if self.lie == "no_text":
                del chunk["choices"][0]["text"]
            if self.lie == "choice_text":
                chunk["choices"] = ["z " * per_chunk]
            if self.lie == "huge":  # per-chunk usage (continuous_usage_stats) that claims 10^12 tokens
                chunk["usage"] = {"prompt_tokens": 5, "completion_tokens": 10**12 if i >= 2 else i + 1}
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await resp.write(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n".encode())
        await self._done(resp, {"choices": [], "usage": {**usage, "completion_tokens": n + 5}})
        return resp


def test_generate_suite_end_to_end():
    events = []
    with FakeSGLang() as srv:
        res = run_suite(srv.url, load_suite(SUITE), on_event=lambda p, i: events.append((p, i)))
    assert res.complete and res.n_failed == 0
    # 1 warmup + 2 prompts x 2 lengths x 2 repeats + sweep 1 + 4
    assert len(res.records) == 1 + 8 + 5 == len(srv.bodies)
    path, body = srv.bodies[1]
    assert path == "/generate" and body["text"] == "def fib(n):"
    assert body["sampling_params"] == {"max_new_tokens": 8, "temperature": 0.0, "ignore_eos": True}
    # token counts come from completion_tokens (the fake's text has 2 words per token)
    assert all(r.completion_tokens == r.max_tokens for r in res.records)
    assert res.server_version == "0.5.23-fake" and res.time_scale == 100.0
    assert res.resolved_spec == SpecConfig(1, 1, 2)  # internal_states: SGLang rewrote draft 3 -> 2
    assert res.accept_length == pytest.approx(2.0)
    assert {r.spec_verify_ct for r in res.records if r.max_tokens == 16} == {8}
    assert len(res.single_rows) == 4 and all(row.tok_per_s.n == 2 for row in res.single_rows)
    assert res.single.cv is not None
    # sweep prompts cycle: request i uses prompts[i % 2]
    c4 = [r for r in res.records if r.phase == "sweep" and r.concurrency == 4]
    assert [r.prompt for r in sorted(c4, key=lambda r: r.index)] == ["fib", "haiku", "fib", "haiku"]
    # flushed between phases: after warm-up, before each sweep batch
    assert srv.events[:3] == ["gen", "flush", "gen"]
    assert srv.events.count("flush") == 3 and all(f["ok"] for f in res.flushes)
    # model time: the fake says its clock runs 100x faster than model time; its e2e_latency is
    # scaled, what the client's latency has beyond it (HTTP, JSON) is not
    single = [r for r in res.records if r.phase == "single"]
    model = [r.completion_tokens / (r.server_latency_s * 100 + r.latency_s - r.server_latency_s) for r in single]
    assert res.single_tok_per_s == pytest.approx(sum(model) / 8)
    assert res.single_tok_per_s > sum(r.tok_per_s for r in single) / 8 / 100  # the overhead is not scaled
    phases = [p for p, _ in events]
    assert phases[0] == "server_info" and phases[-1] == "done" and "sweep" in phases
    single = [i for p, i in events if p == "single"]
    assert single[0]["prompt"] == "fib" and single[0]["max_tokens"] == 8 and single[0]["repeat"] == 0
    assert [i["concurrency"] for p, i in events if p == "sweep"] == [1, 4]
    assert events[-1][1]["step"] == events[-1][1]["total_steps"] == 1 + 8 + 2


def _model_span(batch, scale: float) -> float:
    """First submission to last completion in model time: up to the latest end the server's clock
    accounts for (submission + its e2e_latency) scaled, the HTTP after it as it is."""
    start = min(r.start_s for r in batch)
    span = max(r.end_s for r in batch) - start
    server = max(r.start_s + r.server_latency_s for r in batch) - start
    return server * scale + (span - server)


def test_sweep_aggregate_is_tokens_over_first_submission_to_last_completion():
    with FakeSGLang(token_s=0.002) as srv:
        res = run_suite(srv.url, {**SUITE, "single": {"lengths": []}, "warmup": {"requests": 0},
                                  "sweep": {"concurrencies": [4], "max_tokens": 20}})
    batch = [r for r in res.records if r.phase == "sweep"]
    assert res.tok_per_s_at(4) == pytest.approx(80 / _model_span(batch, 100.0))
    # the 4 requests were in flight together: every one was submitted before any came back (how
    # long each took next to the batch depends on the machine's load; this does not)
    assert max(r.start_s for r in batch) < min(r.end_s for r in batch)
    row = res.sweep_row(4)
    assert row.per_request_tok_per_s.n == 4 and row.latency_p99_ms >= row.latency_p50_ms > 0


@pytest.mark.parametrize("api", ["generate", "openai"])
def test_streaming_gives_ttft_and_inter_token_latency(api):
    with FakeSGLang(token_s=0.001) as srv:
        res = run_suite(srv.url, {**SUITE, "single": {"lengths": [10], "repeats": 1}}, api=api, stream=True)
    recs = [r for r in res.records if r.phase != "warmup"]
    assert all(r.ok and r.completion_tokens == r.max_tokens for r in recs)
    assert all(r.ttft_s is not None and 0 < r.ttft_s <= r.latency_s for r in recs)
    # the tokens of the first chunk are all "first token" (the fake's /generate sends 2 per chunk)
    first_chunk = 2 if api == "generate" else 1
    assert all(len(r.itl_s) == 10 - first_chunk for r in recs if r.max_tokens == 10)
    row = res.sweep_row(4)
    assert row.ttft_p50_ms is not None and row.itl_p99_ms >= row.itl_p50_ms > 0
    assert all(b.get("stream") is True for _, b in srv.bodies)


def test_openai_api_sends_completions_and_reads_usage():
    with FakeSGLang() as srv:
        res = run_suite(srv.url, SUITE, api="openai")
    path, body = srv.bodies[1]
    assert path == "/v1/completions" and body["model"] == "fake/model" and body["prompt"] == "def fib(n):"
    assert body["max_tokens"] == 8 and body["temperature"] == 0.0 and body["ignore_eos"] is True
    assert res.complete and all(r.completion_tokens == r.max_tokens for r in res.records)
    assert res.accept_length is None  # the OpenAI answer carries no spec_verify_ct


def test_flush_is_retried_while_the_server_is_busy():
    with FakeSGLang(busy_flushes=2) as srv:
        res = run_suite(srv.url, {**SUITE, "sweep": {"concurrencies": []}})
    assert srv.events.count("flush-busy") == 2 and srv.events.count("flush") == 1
    assert res.flushes[0]["ok"] and res.flushes[0]["attempts"] == 3 and not res.warnings


def test_failed_and_timed_out_requests_are_recorded_not_dropped():
    # one single length, not SUITE's two: each timed-out request waits out its whole allowance (0.5 s
    # model-time limit plus the client's 2 s wall slack), and a second length recorded its two
    # timeouts through the same loop (5 s more)
    suite = {**SUITE, "timeout_s": 50, "single": {"lengths": [8], "repeats": 2},
             "sweep": {"concurrencies": [2], "max_tokens": 8}, "warmup": {"requests": 0}}
    # The hang rule (two timed-out steps in a row end the run: tests/bench/test_bench_hang.py) is
    # set out of the way: this test is about what is recorded.
    patient = HangPolicy(timed_out_steps=100)
    with FakeSGLang(hang_prompt="autumn") as srv:
        res = run_suite(srv.url, suite, hang=patient)
    timed_out = [r for r in res.records if r.error_kind == "timeout"]
    # haiku's two single requests and its one in the C=2 sweep batch
    assert len(timed_out) == 2 + 1 and all(r.prompt == "haiku" and not r.ok for r in timed_out)
    assert all(0.4 < r.latency_s < 3.0 for r in timed_out)
    assert res.complete and res.n_failed == 3
    assert {row.prompt: row.n_failed for row in res.single_rows} == {"fib": 0, "haiku": 2}
    assert res.sweep_row(2).n_ok == 1 and res.tok_per_s_at(2) is not None
    with FakeSGLang(fail_prompt="autumn") as srv:
        res = run_suite(srv.url, suite, hang=patient)
    http = [r for r in res.records if r.error_kind == "http"]
    assert len(http) == 3 and all(r.http_status == 500 and "out of range" in r.error for r in http)


def test_server_dying_mid_suite_raises_with_the_partial_result():
    with FakeSGLang(die_after=6) as srv:
        with pytest.raises(ServerDiedError) as err:
            run_suite(srv.url, SUITE)
    partial = err.value.partial
    assert not partial.complete and "stopped accepting connections" in partial.error
    assert len(partial.records) == 7 and sum(r.ok for r in partial.records) == 6
    assert partial.records[-1].error_kind in ("disconnected", "connection")
    assert partial.single_tok_per_s is not None  # figures of what was measured


def test_unreachable_server_and_old_server_info_path():
    with FakeSGLang() as srv:
        url = srv.url
    with pytest.raises(ServerUnreachableError, match="no server answering at"):
        run_suite(url, SUITE)
    with FakeSGLang(info_paths=("/get_server_info",)) as srv:
        res = run_suite(srv.url, {**SUITE, "sweep": {"concurrencies": []}})
    assert res.server_version == "0.5.23-fake" and res.resolved_spec == SpecConfig(1, 1, 2)
    with FakeSGLang(info_paths=(), verify_every=0) as srv:
        res = run_suite(srv.url, {**SUITE, "sweep": {"concurrencies": []}})
    assert res.server_info is None and res.time_scale == 1.0 and res.accept_length is None
    assert "no /server_info" in res.warnings[0]


def test_adaptive_repeats_stop_once_the_interval_is_narrow():
    suite = {**SUITE, "single": {"lengths": [20], "repeats": 2}, "sweep": {"concurrencies": []},
             "adaptive": {"rel_ci95": 0.9, "max_repeats": 6}}
    with FakeSGLang(token_s=0.005) as srv:
        res = run_suite(srv.url, suite)
    # The rule, checked against the readings it saw (wall-clock ones: on an idle machine this steady
    # fake's 100 ms requests stop at 2 repeats, on a loaded one they may need more): each row goes
    # on while its readings' 95% interval is wider than 90% of their mean, and stops once it is not.
    rows: dict = {}
    for r in sorted(res.records, key=lambda r: r.repeat):
        if r.phase == "single":
            rows.setdefault((r.prompt, r.max_tokens), []).append(r.tok_per_s)
    assert rows
    for values in rows.values():
        assert 2 <= len(values) <= 6
        assert all(not narrow_enough(values[:k], 0.9) for k in range(2, len(values)))
        assert len(values) == 6 or narrow_enough(values, 0.9)
    suite["adaptive"] = {"rel_ci95": 1e-6, "max_repeats": 4}
    with FakeSGLang(token_s=0.001) as srv:
        res = run_suite(srv.url, suite)
    assert all(row.tok_per_s.n == 4 for row in res.single_rows)  # never that narrow: capped


def test_cli_prints_table_saves_json_and_compares(tmp_path):
    suite_file = tmp_path / "tiny.yaml"
    suite_file.write_text(json.dumps(SUITE))  # JSON is YAML
    base, out = tmp_path / "base.json", tmp_path / "out.json"
    runner = CliRunner()
    with FakeSGLang(token_s=0.001, verify_every=0, info={"version": "x"}) as srv:
        r = runner.invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file), "--json", str(base)])
    assert r.exit_code == 0, r.output
    assert "single request" in r.output and "fib" in r.output and "C=4" not in r.output
    with FakeSGLang(token_s=0.0005) as srv:
        r = runner.invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file), "--json", str(out),
                                "--compare", str(base)])
    assert r.exit_code == 0, r.output
    assert "speedup" in r.output and "model time" in r.output
    assert SuiteResult.load(out).complete
    assert "steps=1 topk=1 draft=2" in r.output


def bench_that_fails(tmp_path, lie: str):
    """``tuner bench --json`` of SUITE against a FakeSGLang that misbehaves as ``lie``: it must exit
    1 with one error line on stderr; that line (in a list) and the --json path."""
    suite_file, out = tmp_path / "tiny.yaml", tmp_path / "out.json"
    suite_file.write_text(json.dumps(SUITE))
    with FakeSGLang(lie=lie) as srv:
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file), "--json", str(out)])
    assert r.exit_code == 1, r.output
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, r.stderr
    return errors, out


def test_cli_bench_where_only_the_warmup_answered_exits_1(tmp_path):
    # QA: every measured request refused (lengths over the context), the 16-token warm-up answered:
    # a table of dashes, "complete": true in --json, exit 0
    errors, out = bench_that_fails(tmp_path, "context4")
    assert errors[0] == ("error: every one of the 13 measured requests failed (only the 1 warm-up request "
                         "answered): no figure was measured; first: single fib at 8 tokens: HTTP 400: Requested "
                         f"token count exceeds the model's maximum context length; records saved to {out}"), errors[0]
    saved = SuiteResult.load(out)
    assert saved.complete is False and saved.error.startswith("every measured request failed (13)")
    assert saved.single_tok_per_s is None and saved.tok_per_s_at(4) is None


def test_cli_bench_where_some_requests_failed_exits_1_naming_the_count_and_the_servers_message(tmp_path):
    # QA: a dataset request over the context length (SGLang's HTTP 400 with its message) failed at
    # every phase: a "warning: 3 of 8 requests failed" naming no cause, exit 0, as a success
    suite_file, out = tmp_path / "tiny.yaml", tmp_path / "out.json"
    suite_file.write_text(json.dumps(SUITE))
    with FakeSGLang(fail_prompt="autumn") as srv:
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file), "--json", str(out)])
    assert r.exit_code == 1, r.output
    assert "single request" in r.stdout and "concurrency sweep" in r.stdout  # the figures are still shown
    saved = SuiteResult.load(out)
    failed = [rec for rec in saved.records if not rec.ok]
    first = next(rec for rec in failed if rec.phase != "warmup")
    assert failed and saved.n_failed == len(failed) and any(rec.ok for rec in saved.records)
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    # the JSON error body is read for its message (SGLang's {"error": {"message": ...}})
    assert errors == [f"error: {len(failed)} of {len(saved.records)} requests failed or timed out (the figures "
                      f"above leave them out; records in {out}); first: {first.phase} haiku at "
                      f"{first.max_tokens} tokens: HTTP 500: selected index k out of range"], r.stderr


def _bench(suite_file, *args, **fake):
    """``tuner bench --url FAKE --suite SUITE_FILE ARGS`` against a ``FakeSGLang(**fake)``: the CLI's
    result, and the fake (its ``bodies`` and ``events``: what it was asked)."""
    with FakeSGLang(**fake) as srv:
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file), *map(str, args)])
    return r, srv


def _compare_refused(suite_file, base, *args, **fake) -> str:
    """``tuner bench --compare BASE`` refused before any request: exit 2, one ``error: --compare:``
    line, which it returns."""
    r, srv = _bench(suite_file, *args, "--compare", base, **fake)
    assert srv.bodies == [] and srv.events == []  # refused before any request
    assert r.exit_code == 2, r.output
    assert r.output.startswith("error: --compare: ") and len(r.output.strip().splitlines()) == 1, r.output
    return r.output


def _compare_runs(suite_file, base, **fake) -> None:
    """``tuner bench --compare BASE`` measures and prints speedups."""
    r, _ = _bench(suite_file, "--compare", base, **fake)
    assert r.exit_code == 0 and "speedup" in r.output, r.output


def test_cli_compare_refuses_a_baseline_of_another_workload_before_any_request(tmp_path):
    # QA: --compare printed an "all (mean)" and per-concurrency speedup against a baseline
    # measured with another suite (other prompts and lengths), exit 0.
    suite_file, base = tmp_path / "tiny.yaml", tmp_path / "base.json"
    suite_file.write_text(json.dumps(SUITE))
    r, _ = _bench(suite_file, "--json", base, verify_every=0, info={"version": "x"})
    assert r.exit_code == 0, r.output
    other = tmp_path / "other.yaml"
    other.write_text(json.dumps({**SUITE, "name": "other", "prompts": SUITE["prompts"][:1]}))
    renamed = tmp_path / "renamed.yaml"  # another name and timeout measure the same thing
    renamed.write_text(json.dumps({**SUITE, "name": "renamed", "timeout_s": 900}))
    for suite, api, says in ((other, "generate", "measured with another suite ('tiny': prompts differ from "
                                                  "suite 'other')"),
                             (suite_file, "openai", "measured through --api generate, this run through --api openai")):
        output = _compare_refused(suite, base, "--api", api)
        assert says in output, output
    (tmp_path / "fib.txt").write_text(SUITE["prompts"][0]["text"])  # the same text from a prompt file
    from_file = tmp_path / "from_file.yaml"
    from_file.write_text(json.dumps({**SUITE, "prompts": [{"name": "fib", "file": "fib.txt"}, SUITE["prompts"][1]]}))
    for same in (renamed, from_file):
        _compare_runs(same, base)


def test_cli_compare_refuses_a_baseline_of_another_model_before_any_request(tmp_path):
    # QA: a baseline measured on the simulator serving org/model-A, --compare against one serving
    # org/model-B with EAGLE3: speedups of 2.33x ... 0.93x printed, exit 0 (two models compared)
    suite_file, base = tmp_path / "tiny.yaml", tmp_path / "base.json"
    suite_file.write_text(json.dumps(SUITE))
    info = {"version": "0.5.23", "model_path": "org/model-A"}
    r, _ = _bench(suite_file, "--json", base, verify_every=0, info=info)
    assert r.exit_code == 0, r.output
    output = _compare_refused(suite_file, base, info={**info, "model_path": "org/model-B"})
    assert "measured on model_path 'org/model-A'" in output and "runs 'org/model-B'" in output, output
    for same in (info, {"version": "0.5.23"}):  # the same model, or a server that does not say
        _compare_runs(suite_file, base, info=same)


def test_cli_compare_refuses_a_partial_baseline(tmp_path):
    # QA: a baseline saved by a run whose server died after 4 requests was compared: its "all (mean)"
    # (one row) against this run's mean over every row, exit 0
    suite_file, base = tmp_path / "tiny.yaml", tmp_path / "base.json"
    suite_file.write_text(json.dumps(SUITE))
    r, _ = _bench(suite_file, "--json", base, die_after=4)
    assert r.exit_code == 1 and SuiteResult.load(base).single_tok_per_s is not None, r.output
    output = _compare_refused(suite_file, base)
    assert output.startswith(f"error: --compare: {base} is no complete measurement of its suite ("), output
    assert "measure the baseline again to the end" in output


def test_cli_saves_the_partial_result_when_the_server_dies(tmp_path):
    out = tmp_path / "partial.json"
    suite_file = tmp_path / "tiny.yaml"
    suite_file.write_text(json.dumps(SUITE))
    with FakeSGLang(die_after=4) as srv:
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file), "--json", str(out)])
    assert r.exit_code == 1
    assert "died mid-suite" in r.output and f"partial result saved to {out}" in r.output
    saved = json.loads(out.read_text())
    assert saved["complete"] is False and len(saved["records"]) == 5


def test_cli_unreachable_server_exits_1():
    with FakeSGLang() as srv:
        url = srv.url
    r = CliRunner().invoke(cli, ["bench", "--url", url, "--suite", "quick"])
    assert r.exit_code == 1 and f"error: no server answering at {url}" in r.output


def test_cli_bad_suite_and_bad_baseline_exit_2(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nprompts: []\n")
    r = CliRunner().invoke(cli, ["bench", "--url", "http://127.0.0.1:9", "--suite", str(bad)])
    assert r.exit_code == 2 and f"{bad}: prompts:" in r.output
    base = tmp_path / "base.json"
    base.write_text("[]")
    r = CliRunner().invoke(cli, ["bench", "--url", "http://127.0.0.1:9", "--suite", "quick",
                                 "--compare", str(base)])
    assert r.exit_code == 2 and "base.json" in r.output and "not a tuner suite result" in r.output


def test_progress_bar_follows_the_suites_events():
    from tuner.cli.bench import _ProgressBar

    bar = _ProgressBar()
    with FakeSGLang() as srv:
        run_suite(srv.url, SUITE, on_event=bar)
    task = bar.progress.tasks[0]
    assert task.total == 1 + 8 + 2 and task.completed == task.total - 1
    assert task.description == "sweep C=4"


def test_sweep_repeats_give_the_aggregate_its_spread():
    suite = {**SUITE, "single": {"lengths": []}, "warmup": {"requests": 0},
             "sweep": {"concurrencies": [3], "max_tokens": 10, "repeats": 3}}
    with FakeSGLang(token_s=0.002) as srv:
        res = run_suite(srv.url, suite)
    row = res.sweep_row(3)
    assert row.batches == 3 and row.n_ok == 9 and row.tok_per_s.n == 3 and row.tok_per_s.cv is not None
    assert [f["before"] for f in res.flushes] == ["sweep C=3"] * 3
    spans = []
    for rep in range(3):
        batch = [r for r in res.records if r.repeat == rep]
        spans.append(30 / _model_span(batch, 100.0))
    assert row.tok_per_s.mean == pytest.approx(sum(spans) / 3)


def test_cli_against_a_server_that_is_not_sglang_exits_1_with_one_line(tmp_path):
    from support.file_server import python_file_server

    suite_file = tmp_path / "tiny.yaml"
    suite_file.write_text(json.dumps(SUITE))
    out = tmp_path / "out.json"
    with python_file_server(tmp_path) as url:  # GET answers, POST is 501, /server_info is 404
        r = CliRunner().invoke(cli, ["bench", "--url", url, "--suite", str(suite_file), "--json", str(out)])
    assert r.exit_code == 1, r.output
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "every one of the" in errors[0] and "SGLang server" in errors[0]
    assert "<html" not in r.output.lower()  # no server error page dumped into the terminal
    saved = json.loads(out.read_text())
    assert saved["complete"] is False and saved["error"].startswith("every request failed")



def _answers(lie: str, stream: bool = False, token_s: float = 0.0005) -> list:
    """The single requests' records of the tiny suite against a fake that lies (``lie``), ``token_s``
    a token."""
    with FakeSGLang(lie=lie, token_s=token_s) as srv:
        res = run_suite(srv.url, load_suite(SUITE), stream=stream)
    return [r for r in res.records if r.phase == "single"]


@pytest.mark.parametrize("lie, says", [
    ("negative", "completion_tokens -8 is not a count of tokens"),
    ("error200", "the server answered with an error: KV cache exhausted, retry later"),
    ("html200", "the answer is not JSON: '<html><body>Bad gateway</body></html>'"),
    # QA: a server's latency is what the simulator's model time is made of; 0 counted a request at
    # wall speed (882x "speedups" on the front), text crashed the run, NaN was stored as a figure
    ("e2e_zero", "e2e_latency 0 for 8 tokens cannot be true"),
    ("e2e_text", "e2e_latency 'fast' is not a duration in seconds"),
    ("e2e_nan", "e2e_latency nan is not a duration in seconds"),
    ("e2e_long", "e2e_latency 50 s is longer than the"),
    # QA: float() read text and true as accept lengths (2.5 and 1.0); SGLang sends a number
    ("accept_text", "spec_accept_length '2.5' is not a number"),
    ("accept_true", "spec_accept_length True is not a number"),
    ("accept_inf", "spec_accept_length inf is not a number"),
])
def test_answers_that_are_no_answer_fail_the_request_quoting_the_server(lie, says):
    records = _answers(lie)
    assert records and not any(r.ok for r in records)
    assert all(r.error_kind == "protocol" for r in records)
    assert says in records[0].error, records[0].error


@pytest.mark.parametrize("lie", ["oversize", "oversize_chunked"])
@pytest.mark.parametrize("stream", [False, True])
def test_an_answer_past_the_size_any_answer_needs_fails_the_request(lie, stream):
    """An answer is read up to 16 MiB: one of 17 MiB fails as protocol, whether the server said its
    length (refused before reading) or sent it in chunks (refused as it passes the limit). QA: a
    100 MB answer was read whole for every request in flight. Asked for a stream, the same body is
    one line of 17 MiB, past aiohttp's line limit: its LineTooLong (no ClientError) ended the suite
    in a traceback; now the request fails."""
    records = _answers(lie, stream=stream)
    assert records and not any(r.ok for r in records)
    assert all(r.error_kind == "protocol" for r in records)
    said = "16 MiB an answer can need" if not stream else "LineTooLong"
    assert said in records[0].error, records[0].error


@pytest.mark.parametrize("api", ["generate", "openai"])
def test_a_complete_answer_without_a_finish_reason_fails(api):
    with FakeSGLang(lie="nofinish") as srv:
        res = run_suite(srv.url, load_suite(SUITE), api=api, stream=False)
    records = [r for r in res.records if r.phase == "single"]
    assert records and not any(r.ok for r in records)
    assert "carries no finish reason" in records[0].error, records[0].error


def test_a_stream_cut_short_fails_and_legal_sse_fields_do_not():
    cut = _answers("cut", stream=True)
    assert cut and not any(r.ok for r in cut)
    assert "without a finish reason: the answer was cut short" in cut[0].error
    # 25 ms a token, as a real server's decode: at the fake's default 0.5 ms a whole stream of 8 tokens
    # took 4 ms, and a client held off the CPU that long on a loaded machine read every token with the
    # first, rightly marking the gaps unseen (no itl_s; CI, -n 4 on 2 cores), which this test read as a
    # failure of the SSE fields
    fields = _answers("sse_fields", stream=True, token_s=0.025)
    assert fields and all(r.ok for r in fields)
    assert all(r.completion_tokens == r.max_tokens and r.itl_s for r in fields)


@pytest.mark.parametrize("api, stream", [("generate", False), ("generate", True), ("openai", False)])
def test_an_aborted_answer_fails_the_request_whatever_its_count(api, stream):
    # QA: SGLang answers a request its scheduler aborted with HTTP 200 and finish reason "abort"
    # (streamed: in the last chunk). It was counted as answered: without ignore_eos its partial
    # output counted in tok/s; with it, the count check called the server's answer untrue.
    for ignore_eos in (False, True):
        with FakeSGLang(lie="abort") as srv:
            res = run_suite(srv.url, load_suite({**SUITE, "ignore_eos": ignore_eos}), api=api, stream=stream)
        records = [r for r in res.records if r.phase == "single"]
        assert records and not any(r.ok for r in records), (ignore_eos, records[0])
        assert all(r.tok_per_s is None and r.error_kind == "protocol" for r in records)
        assert "the server aborted the request" in records[0].error, records[0].error
        if api == "generate":
            assert "Abort in waiting queue" in records[0].error, records[0].error
        assert res.single_tok_per_s is None


@pytest.mark.parametrize("api, stream", [("generate", False), ("generate", True), ("openai", False),
                                         ("openai", True)])
def test_an_answer_without_its_text_fails_the_request(api, stream):
    # QA: answers with honest counts and no text were measured, and the lossless check compared
    # nothing: with bench.lossless.enforce on, such a trial stayed feasible and joined the front.
    with FakeSGLang(lie="no_text") as srv:
        res = run_suite(srv.url, load_suite(SUITE), api=api, stream=stream)
    records = [r for r in res.records if r.phase == "single"]
    assert records and not any(r.ok for r in records), records[0]
    assert all(r.error_kind == "protocol" and r.tok_per_s is None for r in records)
    assert "carries no text" in records[0].error, records[0].error


def test_cli_bench_with_counts_that_cannot_be_true_exits_1(tmp_path):
    errors, out = bench_that_fails(tmp_path, "more")
    assert "answers cannot be true" in errors[0], errors
    assert "(first: warmup fib at 2 tokens: completion_tokens 5, exactly 2 asked (ignore_eos))" in errors[0]
    saved = json.loads(out.read_text())
    assert saved["complete"] is False and "answers cannot be true" in saved["error"]


def test_cli_bench_with_accept_lengths_the_servers_setting_cannot_give_exits_1(tmp_path):
    # QA: one verify step for 8 tokens on a server that says it runs steps=1 (at most 1 + 2 tokens):
    # `tuner bench` printed accept 8.00, 5.00 ... and exit 0; a study fails it as bad_response
    errors, out = bench_that_fails(tmp_path, "one_verify")
    assert "answers cannot be true" in errors[0], errors
    assert "tokens in 1 verify step:" in errors[0], errors  # one step, in the singular
    assert "num_steps + 1 + 1/spec_verify_ct" in errors[0], errors
    assert json.loads(out.read_text())["complete"] is False
    with FakeSGLang() as srv:  # honest: 2 tokens a verify step, steps=1 gives up to 2 and the prefill's
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(tmp_path / "tiny.yaml")])
    assert r.exit_code == 0, r.output


@pytest.mark.parametrize("lie, says", [("usage_list", "usage [8] is not a JSON object"),
                                       ("choice_text", "choices[0] 'z z z z z z z z ' is not a JSON object")])
@pytest.mark.parametrize("stream", [False, True])
def test_openai_answers_of_another_shape_fail_the_request_not_the_run(lie, says, stream):
    # QA: usage as a list, or choices as strings: AttributeError, a traceback out of `tuner bench`
    # (and out of the suite a study runs)
    with FakeSGLang(lie=lie) as srv:
        res = run_suite(srv.url, load_suite(SUITE), api="openai", stream=stream)
    records = [r for r in res.records if r.phase == "single"]
    assert records and not any(r.ok for r in records) and all(r.error_kind == "protocol" for r in records)
    if not stream or lie == "usage_list":
        assert says in records[0].error, records[0].error
    else:
        assert "choices[0] 'z ' is not a JSON object" in records[0].error, records[0].error


@pytest.mark.parametrize("ignore_eos", [True, False])
def test_a_stream_whose_count_goes_back_fails_the_request(ignore_eos):
    # QA: a first chunk claiming all 8 tokens, then 4, 6, 8: taken as one chunk of 8 tokens (a TTFT
    # for the whole answer, no inter-token latency), the count's fall skipped in silence
    with FakeSGLang(lie="backwards") as srv:
        res = run_suite(srv.url, load_suite({**SUITE, "ignore_eos": ignore_eos}), stream=True)
    records = [r for r in res.records if r.phase == "single"]
    assert records and not any(r.ok for r in records), records[0]
    assert "completion_tokens went back from 8 to 4 within the stream" in records[0].error, records[0].error


def test_itl_is_not_guessed_when_the_count_comes_only_at_the_end():
    suite = {**SUITE, "sweep": {"concurrencies": [1], "max_tokens": 8}}
    for lie, has_itl in ((None, True), ("chunky", False)):  # one token a chunk: the gaps are per token
        with FakeSGLang(lie=lie) as srv:
            res = run_suite(srv.url, load_suite(suite), api="openai", stream=True)
        done = [r for r in res.records if r.phase == "single"]
        assert done and all(r.ok and r.completion_tokens == r.max_tokens and r.ttft_s is not None for r in done)
        assert all(bool(r.itl_s) is has_itl for r in done), lie


@pytest.mark.parametrize("api", ["generate", "openai"])
def test_a_stream_count_far_over_max_tokens_fails_the_request_at_once(api):
    """A chunk that says 10^12 tokens so far fails its request there, quoting the count. QA: the
    client first split the chunk's gap over every claimed token, a list of that many floats: with
    10^8 the run held 13.8 GB after 11 minutes, 10^12 raised MemoryError out of the suite."""
    with FakeSGLang(lie="huge") as srv:
        res = run_suite(srv.url, load_suite(SUITE), api=api, stream=True)
    records = [r for r in res.records if r.phase == "single"]
    assert records and not any(r.ok for r in records)
    assert all(r.error_kind == "protocol" and len(r.itl_s) < r.max_tokens for r in records)
    assert "completion_tokens 1000000000000 is over the" in records[0].error, records[0].error


def test_a_huge_answer_that_is_not_json_is_quoted_from_its_start_without_copies():
    """A 100 MB answer that is no JSON fails its request quoting its start. QA: the quote split the
    whole body into words first (a suite of such answers took 35 s and 1.5 GB); here the child may
    hold 150 MB beyond the body, which the old quote's copies and list of 50M words overran."""
    code = """
import resource
from tuner.bench.client import _json_answer
body = b"a " * 50_000_000
vm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmSize:")) * 1024
resource.setrlimit(resource.RLIMIT_AS, (vm + 150 * 2**20, resource.getrlimit(resource.RLIMIT_AS)[1]))
try:
    _json_answer(body)
except ValueError as exc:
    print(exc)
"""
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-300:]
    assert out.stdout.startswith("the answer is not JSON: 'a a a a"), out.stdout[:100]
