"""A client's request id is in flight while its request runs and free again however the request ends.

SGLang 0.5.23 refuses a second request with a live id (``tokenizer_manager.py`` ``_init_req_state``,
lines 3834-3837) and forgets the id when the request ends. The simulator's table is
:class:`tuner.sim.live_ids.LiveRequestIds`; its lease is checked here in-process for each way a
handler ends (return, exception, cancellation), and over HTTP on a running simulator for a normal
answer, a non-streamed client that closes its connection and a stream closed mid-way.
"""

from __future__ import annotations

import asyncio
import json
import socket
import time
from urllib.parse import urlsplit

import pytest
import requests
from support.simproc import running_sim

from tuner.sim.live_ids import LiveRequestIds

JSON = {"Content-Type": "application/json"}
DEADLINE_S = 30.0  # generous: a loaded 2-core machine


# ------------------------------------------------------------------ the lease, in-process
def test_a_lease_frees_its_ids_on_return_and_on_an_exception():
    live = LiveRequestIds()
    with live.lease() as hold:
        hold(["a", None, "b"])
        assert "a" in live and "b" in live and len(live) == 2
    assert len(live) == 0
    with pytest.raises(RuntimeError), live.lease() as hold:
        hold(["c"])
        assert "c" in live
        raise RuntimeError("the handler failed")
    assert "c" not in live and len(live) == 0


def test_a_lease_frees_its_ids_when_the_handler_is_cancelled():
    """aiohttp cancels a handler whose client disconnected: the ids go with it."""
    live = LiveRequestIds()

    async def handler(started: asyncio.Event):
        with live.lease() as hold:
            hold(["d"])
            started.set()
            await asyncio.sleep(3600)

    async def main():
        started = asyncio.Event()
        task = asyncio.create_task(handler(started))
        await started.wait()
        assert "d" in live
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    assert "d" not in live


def test_a_refused_duplicate_leaves_the_live_id_held():
    """The second request's lease never held the id, so its end cannot free the first's."""
    live = LiveRequestIds()
    with live.lease() as first:
        first(["e"])
        with pytest.raises(ValueError, match="already in flight"), live.lease() as second:
            second(["e"])
        assert "e" in live
    assert "e" not in live


# ------------------------------------------------------------------ over HTTP
def _post(sim, route: str, body: dict, timeout: float = 30) -> requests.Response:
    return requests.post(sim.url + route, data=json.dumps(body).encode(), headers=JSON, timeout=timeout)


def _refused(sim, rid: str) -> bool:
    """Whether ``rid`` is in flight. The probe never holds it: SGLang checks the id before the context
    (io_struct.py, then tokenizer_manager.py ``_validate_one_request``), and a free id gets the
    context-length refusal, so probing cannot take the id from the request it waits for."""
    r = _post(sim, "/generate", {"text": "hi", "rid": rid, "sampling_params": {"max_new_tokens": 10 ** 6}})
    assert r.status_code == 400, r.text
    message = r.json()["error"]["message"]
    if message == f"Duplicate request ID detected: {rid}":
        return True
    assert message.startswith("Requested token count exceeds"), message
    return False


def _wait(condition, what: str) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.02)


def _long(rid: str, stream: bool = False) -> dict:
    return {"text": "hi", "rid": rid, "stream": stream,
            "sampling_params": {"max_new_tokens": 8000, "ignore_eos": True}}


@pytest.fixture(scope="module")
def slow():
    with running_sim(speedup=20.0) as s:  # an 8000-token request runs for minutes of wall time
        yield s


def test_an_answered_request_frees_its_id(slow):
    """Each route's answer frees the id for the next route's request, and the last's for the probe."""
    generate = {"text": "hi", "rid": "done", "sampling_params": {"max_new_tokens": 2}}
    for route, body in (("/generate", generate),
                        ("/v1/completions", {"prompt": "hi", "max_tokens": 2, "rid": "done"}),
                        ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}],
                                                  "max_tokens": 2, "rid": "done"})):
        r = _post(slow, route, body)
        assert r.status_code == 200, (route, r.text)
    assert not _refused(slow, "done")


def test_a_non_streamed_client_that_hangs_up_frees_its_id(slow):
    """The client closes its socket while its request runs (no answer is read)."""
    url = urlsplit(slow.url)
    body = json.dumps(_long("hangup")).encode()
    with socket.create_connection((url.hostname, url.port), timeout=DEADLINE_S) as sock:
        sock.sendall(b"POST /generate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % len(body) + body)
        _wait(lambda: _refused(slow, "hangup"), "the long request's id was never in flight")
    _wait(lambda: not _refused(slow, "hangup"), "the id stayed in flight after the client hung up")


def test_a_stream_closed_mid_way_frees_its_id(slow):
    """An OpenAI stream (the /generate one is test_sglang_answer_shapes.py's) closed after a chunk."""
    r = requests.post(slow.url + "/v1/chat/completions", stream=True, timeout=DEADLINE_S, headers=JSON,
                      data=json.dumps({"messages": [{"role": "user", "content": "hi"}], "rid": "midway",
                                       "stream": True, "max_tokens": 8000, "ignore_eos": True}).encode())
    lines = r.iter_lines()
    assert next(lines).startswith(b"data: ")
    assert _refused(slow, "midway")
    r.close()
    _wait(lambda: not _refused(slow, "midway"), "the id stayed in flight after the stream was closed")
