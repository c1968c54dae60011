"""An asyncio event loop on a daemon thread, for an in-process test server on 127.0.0.1: the test's
own code (and its client's ``asyncio.run``) runs on the main thread meanwhile. The test owns it:
``close()`` stops the loop and joins the thread; nothing else is started."""

from __future__ import annotations

import asyncio
import threading


class LoopThread:
    def __init__(self):
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coro, timeout_s: float = 30.0):
        """``coro``'s result, run on the loop; ``TimeoutError`` past ``timeout_s``."""
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=timeout_s)

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)
        self._loop.close()
