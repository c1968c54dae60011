"""Every body the bench client reads is bounded, not only a request's answer: ``/server_info``, the
``/flush_cache`` answer, the liveness probe, the connections warmed before a batch and the watchdog's
probe read theirs whole, until their timeout (QA: against a server whose GET answers never end,
2.5 GB for ``/server_info`` in 8 s, 1.5 GB in one 3 s liveness probe, 3 GB warming four
connections; the watchdog's read the same every 10 s of a suite). A real server on 127.0.0.1
(:mod:`support.endless_body`) whose bodies are 96 MiB: each read must stop near the client's
16 MiB bound (plus what socket buffers hold), not take the whole."""

from __future__ import annotations

import asyncio

import aiohttp
from support.endless_body import MIB, EndlessBody

from tuner.bench.client import MAX_ANSWER_BYTES, BenchClient
from tuner.bench.watch import HangPolicy, Watchdog

#: the most a bounded read lets the server send: the bound, and loopback's socket buffers besides
TAKEN_AT_MOST = MAX_ANSWER_BYTES + 24 * MIB


def run(srv: EndlessBody, call):
    async def go():
        async with BenchClient(srv.url, timeout_s=5) as client:
            return await call(client)
    return asyncio.run(go())


def test_server_info_past_the_bound_is_no_server_info():
    with EndlessBody() as srv:
        info = run(srv, lambda client: client.server_info())
    assert info is None  # before: read whole, then "accepts connections but does not answer"
    assert srv.sent and max(srv.sent) <= TAKEN_AT_MOST, srv.sent


def test_a_flush_answer_past_the_bound_is_a_failed_flush_saying_so():
    with EndlessBody() as srv:
        outcome = run(srv, lambda client: client.flush_cache())
    assert outcome["ok"] is False and outcome["status"] == 200, outcome
    assert f"passed the {MAX_ANSWER_BYTES // MIB} MiB" in outcome["message"], outcome
    assert max(srv.sent) <= TAKEN_AT_MOST, srv.sent


def test_the_liveness_probe_and_the_warmed_connections_stop_reading_at_the_bound():
    with EndlessBody() as srv:
        assert run(srv, lambda client: client.alive()) is True  # it answered, endlessly
        assert len(srv.sent) == 1 and srv.sent[0] <= TAKEN_AT_MOST, srv.sent
        run(srv, lambda client: client.open_connections(3))
    assert len(srv.sent) == 4 and max(srv.sent) <= TAKEN_AT_MOST, srv.sent


def test_the_watchdogs_probe_stops_reading_at_the_bound_and_counts_it_answered():
    async def probe(url):
        dog = Watchdog(url, HangPolicy(probe_timeout_s=5))
        async with aiohttp.ClientSession() as session:
            return await dog._answers(session)

    with EndlessBody() as srv:
        answered = asyncio.run(probe(srv.url))
    assert answered is True  # before: read to the probe's timeout, and counted silent
    assert max(srv.sent) <= TAKEN_AT_MOST, srv.sent
