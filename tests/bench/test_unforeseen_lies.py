"""The bench client against a server that lies in ways no other fake does: raw bytes on a real socket
(127.0.0.1, an asyncio server in a thread), one request each through ``BenchClient.request``. Each lie
fails its request with a ``protocol`` record naming it; before, one ended the suite in a traceback and
the others were measured as answers (QA)."""

from __future__ import annotations

import asyncio
import json

import pytest
from support.raw_server import RawServer, read_request

from tuner.bench import client as client_module
from tuner.bench.client import BenchClient
from tuner.bench.records import RequestRecord


class LyingServer(RawServer):
    """Answers every request with ``answer(path)`` (whole HTTP response bytes), then closes the
    connection (``hold``: only once the server stops). ``with`` starts and stops it."""

    def __init__(self, answer, hold: bool = False):
        self.answer, self.hold = answer, hold
        self._released: asyncio.Event | None = None

    async def _handle(self, reader, writer):
        try:
            head = await read_request(reader)
            writer.write(self.answer(head.split(b" ")[1].decode()))
            await writer.drain()
            if self.hold:
                await self._released.wait()
        finally:
            writer.close()

    async def _start(self):
        self._released = asyncio.Event()
        await super()._start()

    async def _stop(self):
        self._released.set()
        await super()._stop()
        await self._server.wait_closed()


def json_answer(body: bytes) -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body) + body)


def event_stream(chunks: list) -> bytes:
    """An SSE answer of ``chunks`` (objects, or ``"[DONE]"``), closed after the last, as SGLang sends."""
    lines = b"".join(b"data: " + (c.encode() if isinstance(c, str) else json.dumps(c).encode()) + b"\n\n"
                     for c in chunks)
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n" + lines


def ask(url: str, api: str, stream: bool, max_tokens: int = 4) -> RequestRecord:
    async def go():
        async with BenchClient(url, api=api, stream=stream, timeout_s=60) as client:
            record = RequestRecord(phase="single", prompt="p", max_tokens=max_tokens)
            return await client.request(record, "hello")
    return asyncio.run(go())


#: JSON nested past the decoder's recursion limit: a few hundred bytes of brackets
DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("api, stream", [("generate", False), ("openai", True), ("chat", False)])
def test_json_nested_past_the_decoders_depth_fails_the_request_not_the_suite(api, stream):
    # QA: RecursionError out of json.loads, no ValueError: `tuner bench` ended in a traceback
    streamed = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\ndata: " + DEEP + b"\n\n"
    answer = streamed if stream else json_answer(DEEP)
    with LyingServer(lambda path: answer) as srv:
        record = ask(srv.url, api, stream)
    assert not record.ok and record.error_kind == "protocol", record
    assert "the answer is not JSON: '[[[[" in record.error, record.error


def test_server_info_nested_past_the_decoders_depth_is_no_server_info():
    async def go(url):
        async with BenchClient(url) as client:
            return await client.server_info()
    with LyingServer(lambda path: json_answer(DEEP)) as srv:
        assert asyncio.run(go(srv.url)) is None


def usage(n: int) -> dict:
    return {"prompt_tokens": 5, "completion_tokens": n, "total_tokens": 5 + n}


def _generate_chunk(text: str, n: int, finished: bool) -> dict:
    reason = {"type": "length", "length": n} if finished else None
    meta = {"prompt_tokens": 5, "completion_tokens": n, "finish_reason": reason}
    return {"text": text, "meta_info": meta}


def _openai_chunk(api: str, text: str | None, n: int, reason: str | None) -> dict:
    choice = ({"index": 0, "delta": {} if text is None else {"content": text}} if api == "chat"
              else {"index": 0, "text": text or ""})
    return {"object": "x", "model": "default", "usage": usage(n),
            "choices": [{**choice, "finish_reason": reason}]}


def _usage_chunk(n: int) -> dict:
    return {"object": "x", "model": "default", "choices": [], "usage": usage(n)}


#: streams that go on after their finish reason: text, or a second finish (QA: each read as one answer)
WENT_ON = {
    "generate": [_generate_chunk("ab", 2, False), _generate_chunk("abcd", 4, True),
                 _generate_chunk("abcdZZ", 4, True), "[DONE]"],
    "openai": [_openai_chunk("openai", "ab", 2, None), _openai_chunk("openai", "cd", 4, "length"),
               _openai_chunk("openai", "ZZ", 4, "stop"), _usage_chunk(4), "[DONE]"],
    "chat": [_openai_chunk("chat", "ab", 2, None), _openai_chunk("chat", "cd", 4, None),
             _openai_chunk("chat", None, 4, "length"), _openai_chunk("chat", "ZZ", 4, None),
             _usage_chunk(4), "[DONE]"],
}


@pytest.mark.parametrize("api", sorted(WENT_ON))
def test_a_stream_that_goes_on_after_its_finish_reason_fails_the_request(api):
    answer = event_stream(WENT_ON[api])
    with LyingServer(lambda path: answer) as srv:
        record = ask(srv.url, api, stream=True)
    assert not record.ok and record.error_kind == "protocol", record
    assert "the stream went on after its finish reason with '{" in record.error, record.error
    assert record.output_text is None


@pytest.mark.parametrize("api", ["openai", "chat"])
def test_the_usage_and_sglext_chunks_after_the_finish_reason_are_sglangs_own(api):
    # the control: SGLang 0.5.23's own order (finish, sglext with choices: [], usage, [DONE]) is an answer
    sglext = {**_usage_chunk(4), "usage": None,
              "sglext": {"spec_tokens_details": {"spec_verify_ct": 2, "spec_accept_length": 2.0}}}
    chunks = [c for c in WENT_ON[api] if "ZZ" not in json.dumps(c)]
    chunks.insert(-2, sglext)
    with LyingServer(lambda path: event_stream(chunks)) as srv:
        record = ask(srv.url, api, stream=True)
    assert record.ok, record.error
    assert (record.output_text, record.completion_tokens, record.spec_verify_ct) == ("abcd", 4, 2)


#: answers whose finish reason is no reason (SGLang's are strings: a /generate dict's "type", OpenAI's own)
NO_REASON = {
    "generate": {"text": "abcd", "meta_info": {"prompt_tokens": 5, "completion_tokens": 4,
                                               "finish_reason": {"type": ["length"]}}},
    "openai": {"model": "default", "usage": usage(4),
               "choices": [{"index": 0, "text": "abcd", "finish_reason": [1, 2]}]},
    "chat": {"model": "default", "usage": usage(4),
             "choices": [{"index": 0, "message": {"role": "assistant", "content": "abcd"},
                          "finish_reason": 5}]},
}


@pytest.mark.parametrize("api", sorted(NO_REASON))
def test_a_finish_reason_that_is_no_string_fails_the_request(api):
    answer = json_answer(json.dumps(NO_REASON[api]).encode())
    with LyingServer(lambda path: answer) as srv:
        record = ask(srv.url, api, stream=False)
    assert not record.ok and record.error_kind == "protocol", record
    assert "is not a reason" in record.error and record.finish_reason is None, record


def test_an_accept_length_from_a_server_that_says_it_does_not_speculate_fails_the_run(tmp_path):
    # SGLang sends spec_accept_length only beside spec_verify_ct > 0: alone, from a server whose
    # /server_info says speculative_algorithm null, it is verify steps that server says it never runs
    from click.testing import CliRunner

    from tuner.cli import cli
    info = {"version": "0.5.23", "model_path": "m", "speculative_algorithm": None}
    meta = {"prompt_tokens": 5, "completion_tokens": 8, "e2e_latency": 0.001,
            "finish_reason": {"type": "length", "length": 8}, "spec_accept_length": 2.5}

    def answer(path: str) -> bytes:
        if path in ("/server_info", "/generate"):
            return json_answer(json.dumps(info if path == "/server_info" else
                                          {"text": "abcdefgh", "meta_info": meta}).encode())
        return json_answer(b"{}")  # /flush_cache, /v1/models, /health

    suite = {"name": "one", "prompts": [{"name": "fib", "text": "def fib(n):"}],
             "single": {"lengths": [8], "repeats": 1}, "sweep": {"concurrencies": []},
             "warmup": {"requests": 0}, "timeout_s": 500}
    suite_file, out = tmp_path / "one.yaml", tmp_path / "out.json"
    suite_file.write_text(json.dumps(suite))
    with LyingServer(answer) as srv:
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file),
                                     "--json", str(out)])
    assert r.exit_code == 1, r.output
    assert "accept length 2.50 tokens per verify step from an autoregressive server" in r.stderr, r.stderr
    assert json.loads(out.read_text())["complete"] is False


#: HTTP aiohttp's response parser refuses, on a connection that worked
UNREADABLE = {
    "chunk size": (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
                   b"ZZZ\r\nhello\r\n0\r\n\r\n"),
    "header": b"HTTP/1.1 200 OK\r\nX-Pad: " + b"a" * 20_000 + b"\r\nContent-Length: 2\r\n\r\n{}",
}


@pytest.mark.parametrize("lie", sorted(UNREADABLE))
def test_http_the_parser_refuses_is_a_protocol_failure_not_a_refused_connection(lie):
    # QA: error_kind 'connection' (the kind for a refused TCP connection) for an answer that came
    with LyingServer(lambda path: UNREADABLE[lie]) as srv:
        record = ask(srv.url, "generate", stream=False)
    assert not record.ok and record.error_kind == "protocol", record
    assert record.error.startswith("unexpected answer: its HTTP could not be read: "), record


def test_a_stream_held_open_after_done_fails_at_once_not_at_the_timeout(monkeypatch):
    # QA: the request waited out its whole timeout (300 s by default), recorded as 'timeout' with no
    # complete answer, though [DONE] had come; two such steps in a row read as a hung server
    monkeypatch.setattr(client_module, "AFTER_DONE_S", 0.2)
    answer = event_stream([_generate_chunk("abcd", 4, True), "[DONE]"])
    with LyingServer(lambda path: answer, hold=True) as srv:
        record = ask(srv.url, "generate", stream=True)  # the request's timeout: 60 s
    assert not record.ok and record.error_kind == "protocol", record
    assert "the stream stayed open 0.2 s after data: [DONE]: SGLang ends it there" in record.error, record


def test_a_stream_closed_after_done_is_an_answer():
    answer = event_stream([_generate_chunk("ab", 2, False), _generate_chunk("abcd", 4, True), "[DONE]"])
    with LyingServer(lambda path: answer) as srv:
        record = ask(srv.url, "generate", stream=True)
    assert record.ok and record.output_text == "abcd", record


@pytest.mark.parametrize("api, stream", [("openai", False), ("chat", True)])
def test_an_openai_answer_for_another_model_fails_the_request(api, stream):
    # SGLang names the request's own model in every answer and chunk; the client asked for "default"
    if stream:
        chunks = [{**c, "model": "someone-else"} if isinstance(c, dict) else c for c in WENT_ON[api]
                  if "ZZ" not in json.dumps(c)]
        answer = event_stream(chunks)
    else:
        choices = [{"index": 0, "text": "abcd", "finish_reason": "length"}]
        body = {**NO_REASON[api], "model": "someone-else", "choices": choices}
        answer = json_answer(json.dumps(body).encode())
    with LyingServer(lambda path: answer) as srv:
        record = ask(srv.url, api, stream)
    assert not record.ok and record.error_kind == "protocol", record
    assert "the answer is for model 'someone-else', not the 'default' asked" in record.error, record
