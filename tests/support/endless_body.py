"""A server on 127.0.0.1 (an asyncio server on a thread of its own) that answers every request, on
every path and method, with HTTP 200 and a body of ``total`` bytes, then holds the connection open
until the client goes: a body "without end" for a client that reads it whole, yet bounded, so a test
run without the fix it proves holds ``total`` bytes, not all the machine has. ``sent`` lists, per
connection, the bytes the client took before it stopped reading (what the kernel's socket buffers
hold besides: a few MiB on loopback). ``with`` starts and stops it."""

from __future__ import annotations

import asyncio

from support.raw_server import RawServer

MIB = 1 << 20


class EndlessBody(RawServer):
    def __init__(self, total: int = 96 * MIB):
        self.total = total
        self.sent: list[int] = []

    async def _handle(self, reader, writer):
        at = len(self.sent)
        self.sent.append(0)
        try:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n[")
            chunk = b"0," * (MIB // 2)
            while self.sent[at] < self.total:
                writer.write(chunk)
                await writer.drain()
                self.sent[at] += len(chunk)
            await reader.read()  # the client's close (EOF): it read all there was, then waited
        except (ConnectionError, asyncio.IncompleteReadError):
            pass  # the client stopped reading and closed: what a bounded read does
        finally:
            writer.close()
