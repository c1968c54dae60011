"""The simulated server says one context length everywhere, as SGLang 0.5.23 does: its start-up
line (srt/managers/scheduler.py: ``max_total_num_tokens=..., max_running_requests=...,
context_len=...``), ``/server_info``'s ``context_length`` and ``max_total_num_tokens``, ``/v1/models``'
``max_model_len`` and the HTTP 400 for a request past it (QA: the line said context_len=512 where the
server announced and enforced 8192)."""

from __future__ import annotations

import json
import re
import urllib.error
import urllib.request

import pytest
from support.simproc import running_sim


def _get(url: str) -> dict:
    with urllib.request.urlopen(url, timeout=30) as resp:
        return json.loads(resp.read())


@pytest.mark.parametrize("flags", [(), ("--context-length", "4096")])
def test_the_log_line_says_the_context_length_the_server_announces_and_enforces(flags):
    with running_sim(*flags) as sim:
        info = _get(sim.url + "/server_info")
        models = _get(sim.url + "/v1/models")
        too_long = json.dumps({"text": "word " * info["context_length"], "sampling_params": {"max_new_tokens": 1}})
        req = urllib.request.Request(sim.url + "/generate", data=too_long.encode(),
                                     headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(req, timeout=30)
        log = sim.log
    said = re.search(r"max_total_num_tokens=(\d+), chunked_prefill_size=\S+, max_prefill_tokens=\S+, "
                     r"max_running_requests=\d+, context_len=(\d+)$", log, re.M)
    assert said is not None, [line for line in log.splitlines() if "context_len" in line]
    context = info["context_length"]
    assert int(said.group(2)) == context == models["data"][0]["max_model_len"]
    assert int(said.group(1)) == info["max_total_num_tokens"]
    if flags:
        assert context == int(flags[1])
    body = refused.value.read().decode()
    assert refused.value.code == 400 and f"context length ({context} tokens)" in body, body
