"""`tuner bench` against a /generate whose ``output_ids`` disagree with its ``completion_tokens``
(a real aiohttp server on 127.0.0.1): SGLang 0.5.23 counts the ids it sends, so another length fails
the request with one line naming it, exit 1. Before, 3 ids for 8 tokens were measured, exit 0 (QA)."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import web
from click.testing import CliRunner
from test_bench_client import FakeSGLang
from test_lying_server import ONE, _bench

from tuner.cli import cli


class IdsServer(FakeSGLang):
    """/generate as SGLang 0.5.23 answers it (two chunks when streamed, cumulative or, with
    ``incremental``, new ids and text only), but with ``drop`` ids fewer than it counts in each."""

    def __init__(self, drop: int, incremental: bool = False):
        super().__init__()
        self.drop, self.incremental = drop, incremental
        self.info["incremental_streaming_output"] = incremental

    async def _generate(self, request):
        body, _ = await self._admit(request, "/generate")
        rid, n = body["rid"], body["sampling_params"]["max_new_tokens"]
        if not body.get("stream"):
            return web.json_response({"text": "x y " * n, "output_ids": list(range(n - self.drop)),
                                      "meta_info": self._meta(n, rid)})
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)
        before = 0
        for k in (n // 2, n):
            meta = self._meta(k, rid)
            if k < n:
                meta["finish_reason"] = None
            start = before if self.incremental else 0
            chunk = {"text": "x y " * (k - start), "output_ids": list(range(start, k - self.drop)),
                     "meta_info": meta}
            await resp.write(f"data: {json.dumps(chunk)}\n\n".encode())
            before = k
            await asyncio.sleep(0.001)
        await resp.write(b"data: [DONE]\n\n")
        return resp


@pytest.mark.parametrize("args, incremental, said", [
    ((), False, "the answer carries 5 output token ids for completion_tokens 8"),
    (("--stream",), False, "the answer carries 1 output token id for completion_tokens 4"),
    (("--stream",), True, "the answer carries 1 output token id for completion_tokens 4"),
])
def test_output_ids_fewer_than_the_count_fail_the_request(tmp_path, args, incremental, said):
    with IdsServer(drop=3, incremental=incremental) as srv:
        error, saved = _bench(tmp_path, srv.url, *args)
    assert said in error, error
    (record,) = saved["records"]
    assert not record["ok"] and record["error_kind"] == "protocol" and said in record["error"]
    assert saved["figures"]["single_tok_per_s"] is None


@pytest.mark.parametrize("args, incremental", [((), False), (("--stream",), False), (("--stream",), True)])
def test_output_ids_as_many_as_the_count_are_measured(tmp_path, args, incremental):
    # the same server with its ids right: measured (incremental: the chunks' new ids add up to the count)
    suite_file, out = tmp_path / "one.yaml", tmp_path / "out.json"
    suite_file.write_text(json.dumps(ONE))
    with IdsServer(drop=0, incremental=incremental) as srv:
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file),
                                     "--json", str(out), *args])
    assert r.exit_code == 0, r.output
    (record,) = json.loads(out.read_text())["records"]
    assert record["ok"] and record["completion_tokens"] == 8
