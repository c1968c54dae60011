"""A raw asyncio TCP server on 127.0.0.1, on a thread of its own (:class:`LoopThread`), for tests
that write HTTP by hand (what aiohttp's server would refuse to send). A subclass gives
``_handle(reader, writer)`` (:func:`read_request` reads the request it answers); ``with`` starts it
on a free port (``port``, ``url``) and stops it."""

from __future__ import annotations

import asyncio

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
