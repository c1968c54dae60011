"""A raw asyncio TCP server on 127.0.0.1, on a thread of its own (:class:`LoopThread`), for tests
that write HTTP by hand (what aiohttp's server would refuse to send). A subclass gives
``_handle(reader, writer)`` (:func:`read_request` reads the request it answers); ``with`` starts it
on a free port (``port``, ``url``) and stops it. :class:`SseServer` answers with a fixed SSE stream."""

from __future__ import annotations

import asyncio
import json

from support.loop_thread import LoopThread


class RawServer:
    port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        raise NotImplementedError

    async def _start(self):
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self):
        self._server.close()

    def __enter__(self):
        self._loop = LoopThread()
        self._loop.run(self._start())
        return self

    def __exit__(self, *exc):
        try:
            self._loop.run(self._stop())
        finally:
            self._loop.close()


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """Read one HTTP request whole (its head, and a body of its ``Content-Length``); its head."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    await reader.readexactly(length)
    return head


class SseServer(RawServer):
    """Answers every request with an SSE stream of ``chunks`` (``"[DONE]"`` or objects), a write per
    chunk as SGLang flushes one per output, ``gap_s`` apart (none after the last: the stream ends at
    once, as SGLang's does after ``[DONE]``), then closes."""

    def __init__(self, chunks: list, gap_s: float = 0.0):
        self.chunks, self.gap_s = chunks, gap_s

    async def _handle(self, reader, writer):
        try:
            await read_request(reader)
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
            for i, c in enumerate(self.chunks):
                if i and self.gap_s:
                    await asyncio.sleep(self.gap_s)
                writer.write(b"data: " + (c.encode() if isinstance(c, str) else json.dumps(c).encode()) + b"\n\n")
                await writer.drain()
        finally:
            writer.close()

    async def _stop(self):
        # a stream the client left once it failed the request may still be sleeping: ended here, not
        # left pending in a closed loop (asyncio's "Task was destroyed but it is pending!" in a later test)
        await super()._stop()
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)
