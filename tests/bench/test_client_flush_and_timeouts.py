"""The bench client's flush and wall timeout (tuner/bench/client.py): a server without a usable
/flush_cache (404, 405, 501) is asked once and marked as one that does not flush, never retried as a
busy one; and on SGLang's own clock (scale 1) a request waits exactly the suite's timeout, the wall
slack being for a sped-up clock only."""

from __future__ import annotations

import asyncio

import pytest
from aiohttp import web

from tuner.bench.client import WALL_SLACK_S, BenchClient


async def _flush_against(status: int) -> tuple[dict, bool, int]:
    asked = []

    async def flush(request):
        asked.append(1)
        return web.Response(status=status, text="no such thing")

    app = web.Application()
    app.router.add_post("/flush_cache", flush)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        async with BenchClient(f"http://127.0.0.1:{port}") as client:
            answer = await client.flush_cache()
            return answer, client.flush_supported, len(asked)
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("status", [404, 405, 501])
def test_a_server_without_a_usable_flush_is_asked_once(status):
    answer, supported, asked = asyncio.run(_flush_against(status))
    assert asked == 1 and answer["attempts"] == 1 and not supported
    assert answer["ok"] is False and answer["status"] == status and answer["message"] == "server has no /flush_cache"


def test_the_wall_timeout_is_the_suite_s_on_sglang_s_clock_and_slack_only_on_a_faster_one():
    client = BenchClient("http://127.0.0.1:1", timeout_s=30.0)
    assert client.wall_timeout_s == 30.0
    client.set_time_scale(10.0)
    assert client.wall_timeout_s == pytest.approx(3.0 + WALL_SLACK_S)
