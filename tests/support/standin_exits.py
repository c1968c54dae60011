"""The stand-in server (:mod:`support.standin_server`) with two more ways to end: it exits with code 0
right after it became ready, or in the middle of the suite, as a server whose process winds down
after its HTTP socket is gone (SGLang's takes seconds to stop its scheduler and TP workers).

``STANDIN_MODES`` as for the stand-in, plus:

* ``exit_ready``: exits 0 a few milliseconds after its first ``/health_generate`` answer;
* ``linger_ready``: after its first ``/health_generate`` answer closes its listening socket, then
  exits 0 a second later;
* ``linger_generate``: at the first ``/generate``, closes its listening socket and the request's
  connection, then exits 0 a second later.

Run through :func:`exits_python` (a study's ``server.python``), as :func:`support.standin.standin_python`.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from aiohttp import web

sys.path.insert(0, str(Path(__file__).parent))
import standin_server as base  # noqa: E402

LINGER_S = 1.0


class Exits(base.StandIn):
    site: web.TCPSite | None = None

    async def _linger_then_exit(self) -> None:
        if self.site is not None:
            await self.site.stop()  # the socket is gone: connections are refused from now on
        await asyncio.sleep(LINGER_S)
        os._exit(0)

    async def generate(self, request: web.Request) -> web.Response:
        if self.mode == "linger_generate":
            asyncio.get_running_loop().create_task(self._linger_then_exit())
            request.transport.close()
            await asyncio.sleep(3600)
        return await super().generate(request)

    def app(self) -> web.Application:
        app = super().app()

        @web.middleware
        async def after_ready(request, handler):
            resp = await handler(request)
            if request.path == "/health_generate":
                if self.mode == "exit_ready":
                    asyncio.get_running_loop().call_later(0.005, os._exit, 0)
                elif self.mode == "linger_ready":
                    await resp.prepare(request)
                    await resp.write_eof()
                    asyncio.get_running_loop().create_task(self._linger_then_exit())
            return resp

        app.middlewares.append(after_ready)
        return app


async def serve(args, mode: str) -> None:
    standin = Exits(args, mode)
    runner = web.AppRunner(standin.app(), shutdown_timeout=0.1)
    await runner.setup()
    standin.site = web.TCPSite(runner, args.host, args.port)
    await standin.site.start()
    print(f"standin ({mode}) listening on http://{args.host}:{args.port}", flush=True)
    await asyncio.Event().wait()


def exits_python(folder: Path) -> Path:
    """An executable running this stand-in with whatever the launcher passes (``-m tuner.sim ...``)."""
    wrapper = Path(folder) / "python-exits"
    wrapper.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{Path(__file__)}" "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


if __name__ == "__main__":
    ns = base.parse(sys.argv[1:])
    asyncio.run(serve(ns, base.mode_for(ns, os.environ.get("STANDIN_MODES", ""))))
