"""An answer whose body is not in the Content-Encoding its header names is a ``protocol`` failure on
one line, not a ``disconnected`` one: the connection worked (QA: recorded as ``disconnected``, the
kind for a server that closed the connection mid-request, with aiohttp's two-line message, which a
study quotes in its trial's failure message). Real HTTP on 127.0.0.1 (the raw server of
``test_unforeseen_lies``)."""

from __future__ import annotations

import json

import pytest
from test_unforeseen_lies import LyingServer, ask


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
@pytest.mark.parametrize("api, stream", [("generate", False), ("openai", True)])
def test_a_body_not_in_its_named_encoding_is_a_protocol_failure_on_one_line(encoding, api, stream):
    meta = {"prompt_tokens": 5, "completion_tokens": 4, "finish_reason": {"type": "length"}}
    body = json.dumps({"text": "abcd", "meta_info": meta}).encode()  # plain JSON, said to be compressed
    if stream:
        body = b"data: " + body + b"\n\ndata: [DONE]\n\n"
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: %s\r\n"
              b"Connection: close\r\nContent-Length: %d\r\n\r\n" % (encoding.encode(), len(body)) + body)
    with LyingServer(lambda path: answer) as srv:
        record = ask(srv.url, api, stream)
    assert not record.ok and record.error_kind == "protocol", record
    said = f"its body could not be decoded: Can not decode content-encoding: {encoding}"
    assert said in record.error, record.error
    assert "\n" not in record.error
