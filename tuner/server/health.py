"""The readiness probe's one HTTP request, bounded in all.

``requests.get(url, timeout=T)`` bounds the connect and each wait for a byte, not the answer: a
server that sends its health answer one byte a second never trips it, and ``wait_ready`` stood
past ``server.startup_timeout_s`` for as long as the drip lasted (QA: a 1,000-byte body, one byte a
second: a baseline still "launching" after 38 s of a 4 s start-up timeout). :func:`answer_status`
bounds connect, headers and body together.
"""

from __future__ import annotations

from typing import Callable

#: The most of a health answer read: SGLang 0.5.23 answers ``/health`` and ``/health_generate`` with an
#: empty body (``entrypoints/http_server.py``: ``Response(status_code=200)``); a body past this is no
#: health answer, and one without end was read whole until the probe's timeout (QA: GBs in its 10 s).
MAX_HEALTH_BYTES = 1 << 20


#: How often a probe asks its ``gone`` callable whether to stop waiting (seconds).
GONE_POLL_S = 0.2


def answer_status(url: str, timeout_s: float, gone: Callable[[], bool] | None = None) -> int | None:
    """``GET url``: the HTTP status of an answer received whole within ``timeout_s`` seconds in all
    (connect, headers and body), or None (refused, reset, not HTTP, not whole in time, or a body past
    :data:`MAX_HEALTH_BYTES`). A redirect is not followed: its 3xx is the status. ``gone``: asked every
    :data:`GONE_POLL_S` while the answer is awaited; True gives up at once (None): the server probed
    has exited, and another process that holds its port and never answers would otherwise hold the
    probe for its whole timeout (QA: 10 s before a port clash was seen, at every clash). Call from
    synchronous code: it runs its own event loop.

    aiohttp and asyncio are imported here, on the first probe: the launcher imports this module, and
    a command that launches no server (``tuner study run`` on backend model, ``--dry-run``) loaded them
    for nothing."""
    import asyncio

    import aiohttp

    async def get() -> int:
        async with aiohttp.ClientSession() as session:
            # A redirect is no answer of the server on the port: aiohttp would follow it and report
            # another address's 200 (QA: a 307 to a healthy server read as ready).
            async with session.get(url, timeout=aiohttp.ClientTimeout(total=timeout_s),
                                   allow_redirects=False) as resp:
                size = 0
                async for part in resp.content.iter_chunked(1 << 16):
                    size += len(part)
                    if size > MAX_HEALTH_BYTES:
                        raise ValueError("no health answer: its body passed MAX_HEALTH_BYTES")
                return resp.status

    async def watched() -> int | None:
        task = asyncio.ensure_future(get())
        try:
            while True:
                done, _ = await asyncio.wait({task}, timeout=GONE_POLL_S)
                if done:
                    return task.result()
                if gone is not None and gone():
                    return None
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    try:
        return asyncio.run(watched())
    except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError):
        return None
