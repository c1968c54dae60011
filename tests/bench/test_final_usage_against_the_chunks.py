"""`tuner bench --api openai --stream` against a /v1/completions whose final usage chunk counts more
tokens than its text chunks did (a real aiohttp server on 127.0.0.1). SGLang 0.5.23 sends a chunk for
every output, each with the count so far (``continuous_usage_stats``, which the client asks for), and
its final usage is the last one's count: another is tokens no chunk carried, and fails the request
with one line, exit 1. Before, 4 chunks of text with a final usage of 8 were measured, their last 4
inter-token gaps microseconds each, exit 0 (QA)."""

from __future__ import annotations

import asyncio
import json

from aiohttp import web
from click.testing import CliRunner
from test_bench_client import FakeSGLang
from test_lying_server import ONE, _bench

from tuner.cli import cli


class UsageServer(FakeSGLang):
    """/v1/completions streamed as SGLang 0.5.23 streams it, one token a chunk with the count so far, but
    ``sent`` text chunks in all, then a usage chunk saying ``final`` tokens."""

    def __init__(self, sent: int, final: int):
        super().__init__()
        self.sent, self.final = sent, final

    async def _completions(self, request):
        body, _ = await self._admit(request, "/v1/completions")
        rid = body["rid"]
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)

        async def send(chunk):
            line = json.dumps({"id": rid, "object": "text_completion", **chunk})
            await resp.write(f"data: {line}\n\n".encode())

        for i in range(self.sent):
            await asyncio.sleep(0.001)
            last = i == self.sent - 1
            choice = {"index": 0, "text": f" w{i}", "finish_reason": "length" if last else None}
            await send({"choices": [choice],
                        "usage": {"prompt_tokens": 5, "completion_tokens": i + 1, "total_tokens": i + 6}})
        await send({"choices": [], "usage": {"prompt_tokens": 5, "completion_tokens": self.final,
                                             "total_tokens": self.final + 5}})
        await resp.write(b"data: [DONE]\n\n")
        return resp


def test_a_final_usage_over_the_chunks_count_fails_the_request(tmp_path):
    with UsageServer(sent=4, final=8) as srv:
        error, saved = _bench(tmp_path, srv.url, "--api", "openai", "--stream")
    said = "the final usage says completion_tokens 8, where the stream's text chunks counted 4"
    assert said in error, error
    (record,) = saved["records"]
    assert not record["ok"] and record["error_kind"] == "protocol" and said in record["error"]
    assert saved["figures"]["single_tok_per_s"] is None


def test_a_final_usage_equal_to_the_last_chunks_count_is_measured(tmp_path):
    suite_file, out = tmp_path / "one.yaml", tmp_path / "out.json"
    suite_file.write_text(json.dumps(ONE))
    with UsageServer(sent=8, final=8) as srv:
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file),
                                     "--json", str(out), "--api", "openai", "--stream"])
    assert r.exit_code == 0, r.output
    (record,) = json.loads(out.read_text())["records"]
    assert record["ok"] and record["completion_tokens"] == 8 and len(record["itl_s"]) == 7


def test_a_final_usage_under_the_chunks_count_fails_the_request(tmp_path):
    # fewer than the chunks counted: the count went back, which the stream's own rule names
    with UsageServer(sent=8, final=3) as srv:
        error, _ = _bench(tmp_path, srv.url, "--api", "openai", "--stream")
    assert "completion_tokens went back from 8 to 3 within the stream" in error, error
