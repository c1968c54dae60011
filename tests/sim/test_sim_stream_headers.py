"""The headers of the simulator's SSE streams, as SGLang 0.5.23 sends them.

SGLang answers every stream with ``StreamingResponse(..., media_type="text/event-stream")``
(``srt/entrypoints/http_server.py`` line 979; ``openai/serving_chat.py`` line 2437;
``openai/serving_completions.py`` line 221), whose ``Content-Type`` Starlette completes to
``text/event-stream; charset=utf-8``, and no ``Cache-Control``. The simulator sent a bare
``text/event-stream`` and ``Cache-Control: no-cache``: a client that matched the simulator's header
exactly failed on SGLang.
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


@pytest.mark.parametrize(("route", "body"), [
    ("/generate", {"text": "hi", "stream": True, "sampling_params": {"max_new_tokens": 2}}),
    ("/generate", {"text": "hi", "stream": True, "sampling_params": {"max_new_tokens": -1}}),  # error event
    ("/v1/completions", {"prompt": "hi", "stream": True, "max_tokens": 2}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "stream": True, "max_tokens": 2}),
])
def test_stream_headers_are_sglangs(sim, route, body):
    r = requests.post(sim.url + route, data=json.dumps(body), headers={"Content-Type": "application/json"},
                      timeout=30)
    assert r.status_code == 200, r.text
    assert r.headers["Content-Type"] == "text/event-stream; charset=utf-8"
    assert "Cache-Control" not in r.headers
    assert r.text.endswith("data: [DONE]\n\n")
