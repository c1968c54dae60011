"""A streamed request with nothing to generate (``max_new_tokens: 0``) ends its stream.

The engine queues a stream chunk only for new tokens, so such a stream never got one: the
simulator answered 200 and then sent nothing, never ``[DONE]``, holding the client until its own
timeout (the same request unstreamed answered at once, finish_reason length 0). It now sends the
finished output's one chunk, then ``data: [DONE]``.
"""

from __future__ import annotations

import json

import pytest
import requests
from support.simproc import running_sim


@pytest.fixture(scope="module")
def sim():
    with running_sim(speedup=200.0) as s:
        yield s


def _events(sim, route: str, body: dict) -> list:
    # a short read timeout: before the fix this read never ended
    r = requests.post(sim.url + route, data=json.dumps(body), headers={"Content-Type": "application/json"},
                      timeout=(5, 5))
    assert r.status_code == 200, r.text
    lines = [ln[len("data: "):] for ln in r.text.split("\n\n") if ln.startswith("data: ")]
    assert lines[-1] == "[DONE]"
    return [json.loads(x) for x in lines[:-1]]


def test_generate_stream_of_zero_tokens_ends(sim):
    (chunk,) = _events(sim, "/generate", {"text": "hi", "stream": True, "sampling_params": {"max_new_tokens": 0}})
    assert (chunk["text"], chunk["output_ids"]) == ("", [])
    assert chunk["meta_info"]["finish_reason"] == {"type": "length", "length": 0}
    assert chunk["meta_info"]["completion_tokens"] == 0
    assert "e2e_latency" in chunk["meta_info"]  # a finished request's meta_info


def test_batch_stream_with_a_zero_token_output_ends(sim):
    chunks = _events(sim, "/generate", {"text": ["a", "b"], "stream": True,
                                        "sampling_params": [{"max_new_tokens": 0}, {"max_new_tokens": 2}]})
    last = {c["index"]: c for c in chunks}
    assert last[0]["meta_info"]["completion_tokens"] == 0
    assert last[1]["meta_info"]["completion_tokens"] == 2


def test_chat_stream_of_zero_tokens_ends(sim):
    chunks = _events(sim, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}],
                                                    "max_tokens": 0, "stream": True,
                                                    "stream_options": {"include_usage": True}})
    assert chunks[-1]["usage"]["completion_tokens"] == 0
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "length"
