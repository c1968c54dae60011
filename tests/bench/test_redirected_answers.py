"""A redirect is no answer: the bench client follows none (aiohttp follows ten by default), so a
request is answered by the server at the URL or fails naming where the redirect pointed (QA: a 307 to
another server's ``/generate`` was measured, exit 0, while the liveness and hang probes watched the
first). Real HTTP on 127.0.0.1 (the raw server of ``test_unforeseen_lies``), two servers."""

from __future__ import annotations

import asyncio
import json

import pytest
from test_unforeseen_lies import LyingServer, ask, json_answer

from tuner.bench.client import BenchClient

META = {"prompt_tokens": 5, "completion_tokens": 4, "finish_reason": {"type": "length"}}
ANSWER = json_answer(json.dumps({"text": "abcd", "meta_info": META, "version": "0.5.23"}).encode())


def redirect(status: int, to: str) -> bytes:
    return (b"HTTP/1.1 %d Moved\r\nLocation: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            % (status, to.encode()))


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_request_redirected_to_another_server_fails_naming_where(status):
    with LyingServer(lambda path: ANSWER) as other:
        with LyingServer(lambda path: redirect(status, other.url + path)) as srv:
            record = ask(srv.url, "generate", False)
    assert not record.ok and record.error_kind == "http" and record.http_status == status, record
    assert f"HTTP {status}: a redirect to '{other.url}/generate', not an answer" in record.error, record.error


def test_server_info_and_the_flush_are_not_taken_from_another_server():
    async def go(url):
        async with BenchClient(url) as client:
            return await client.server_info(), await client.flush_cache()

    with LyingServer(lambda path: ANSWER) as other:
        with LyingServer(lambda path: redirect(307, other.url + path)) as srv:
            info, flush = asyncio.run(go(srv.url))
    assert info is None  # not the other server's
    assert flush["ok"] is False and flush["status"] == 307 and flush["attempts"] == 1, flush
    assert flush["message"] == f"a redirect to '{other.url}/flush_cache', not an answer", flush
