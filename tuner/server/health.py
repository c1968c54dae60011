"""The readiness probe's one HTTP request, bounded in all.

``requests.get(url, timeout=T)`` bounds the connect and each wait for a byte, not the answer: a
server that sends its health answer one byte a second never trips it, and ``wait_ready`` stood
past ``server.startup_timeout_s`` for as long as the drip lasted (QA: a 1,000-byte body, one byte a
second: a baseline still "launching" after 38 s of a 4 s start-up timeout). :func:`answer_status`
bounds connect, headers and body together.
"""

from __future__ import annotations

import asyncio

import aiohttp


def answer_status(url: str, timeout_s: float) -> int | None:
    """``GET url``: the HTTP status of an answer received whole within ``timeout_s`` seconds in all
    (connect, headers and body), or None (refused, reset, not HTTP, or not whole in time). Call from
    synchronous code: it runs its own event loop."""

    async def get() -> int:
        async with aiohttp.ClientSession() as session:
            async with session.get(url, timeout=aiohttp.ClientTimeout(total=timeout_s)) as resp:
                await resp.read()
                return resp.status

    try:
        return asyncio.run(get())
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError):
        return None
