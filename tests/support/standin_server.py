"""A stand-in SGLang server that lies, freezes or wedges on request: a small aiohttp app, run as a real
process on 127.0.0.1, that the tuner launches in place of the simulator (``server.python`` is a
wrapper running this file with the simulator's command line, see :mod:`support.standin`).

It takes the simulator's flags (``--host``, ``--port``, the speculative flags, ``--sim-speedup``;
the rest is ignored) and answers SGLang's native API honestly: ``/server_info`` with the speculative
args it was started with and the simulator's ``sim_speedup``; ``/generate`` with exactly
``max_new_tokens`` completion tokens, ``spec_verify_ct`` for an accept length below ``num_steps + 1``,
and a text that depends only on the prompt and the length (so the lossless check passes). Its clock
is the simulator's: a model tok/s of 100 (times 0.8 x the accept length when speculating), slept in
wall time divided by ``--sim-speedup``.

``STANDIN_MODES`` (environment, from ``server.env``) makes chosen launches misbehave:
``KEY=MODE,KEY=MODE`` where KEY is ``baseline`` or an effective setting ``S-K-D`` (e.g. ``3-1-4``),
or ``*`` for every launch. Modes:

* ``no_spec``: runs without speculation whatever it was asked (``speculative_algorithm: null``);
* ``no_server_info``: 404 on ``/server_info`` and ``/get_server_info``;
* ``inflate``: reports 37% more completion tokens than it generated;
* ``half``: generates half of ``max_new_tokens``;
* ``accept``: one verify step per request (an accept length above ``num_steps + 1``);
* ``no_scale`` / ``bad_scale`` / ``wrong_scale``: a ``+sim`` version without ``sim_speedup`` / with
  ``"fast"`` / with twice the launched value;
* ``baseline_spec``: an autoregressive launch that reports speculation (``EAGLE3 3-1-4``) and verify steps;
* ``freeze``: answers ``/server_info``, then stops itself with SIGSTOP at the next request;
* ``freeze_info``: stops itself with SIGSTOP when ``/server_info`` is asked, before answering;
* ``wedge``: ``/generate`` never answers (everything else does: a stuck scheduler);
* ``slow``: every ``/generate`` takes ``STANDIN_SLOW_S`` wall seconds more (default 5), its answer
  otherwise honest (a server that answers, slowly);
* ``http400``: every ``/generate`` of 16 tokens or more answers HTTP 400 with its own JSON error;
* ``no_text``: ``/generate`` answers without ``text`` (counts, finish reason and timing honest);
* ``other_model``: ``/server_info`` names another model (``model_path``, ``served_model_name``);
* ``respawn``: at its second ``/generate`` it stops listening, starts a copy of itself on the same port
  (a new pid, in a session of its own, as a supervisor's restart would), answers once the copy
  listens, and exits 0: the rest of the suite is answered, honestly, by a process the tuner did not
  launch;
* ``drip_health``: ``/health_generate`` answers 200 and then its body, one byte a second (a
  thousand of them);
* ``fast``: answers four times faster than it honestly would (3.2 x its accept length over the
  baseline), every figure consistent with that speed (``e2e_latency`` the time it slept: a clock
  that lies, not a count).

Run: ``python standin_server.py [-m tuner.sim] --host 127.0.0.1 --port 0 ...``; with port 0 it binds a
free port and prints ``listening on http://HOST:PORT``.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import signal
import subprocess
import sys

from aiohttp import web

MODEL_TOK_PER_S = 100.0


def parse(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument("-m", dest="module")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--model-path", default="standin/model")
    p.add_argument("--speculative-algorithm")
    p.add_argument("--speculative-num-steps", type=int)
    p.add_argument("--speculative-eagle-topk", type=int)
    p.add_argument("--speculative-num-draft-tokens", type=int)
    p.add_argument("--sim-speedup", type=float, default=1.0)
    args, _ = p.parse_known_args(argv)
    return args


def mode_for(args: argparse.Namespace, spec: str) -> str:
    key = ("baseline" if not args.speculative_algorithm else
           f"{args.speculative_num_steps}-{args.speculative_eagle_topk}-{args.speculative_num_draft_tokens}")
    for item in filter(None, spec.split(",")):
        k, _, mode = item.partition("=")
        if k in (key, "*"):
            return mode
    return "honest"


class StandIn:
    def __init__(self, args: argparse.Namespace, mode: str):
        self.args, self.mode = args, mode
        self.generated = 0  #: /generate requests taken
        self.speculative = bool(args.speculative_algorithm) and mode != "no_spec"
        steps = args.speculative_num_steps or 0
        # below the bound num_steps + 1, as a real draft head is
        self.accept = min(steps + 1, 1.0 + 0.6 * steps) if self.speculative else 1.0

    async def respawn(self, request: web.Request) -> None:
        """Hand this server's port to a copy of it, then exit 0 right after the present answer."""
        host, port = request.transport.get_extra_info("sockname")[:2]
        await self.site.stop()  # no new connections here; the present one stays open
        argv = list(sys.argv)
        argv[argv.index("--port") + 1] = str(port)
        subprocess.Popen([sys.executable, *argv], start_new_session=True, stdin=subprocess.DEVNULL,
                         env={**os.environ, "STANDIN_RESPAWNED": "1"})
        for _ in range(600):  # until the copy accepts connections (at most a minute)
            try:
                _, writer = await asyncio.open_connection(host, port)
                writer.close()
                break
            except OSError:
                await asyncio.sleep(0.1)
        asyncio.get_running_loop().call_later(0.01, os._exit, 0)

    def server_info(self) -> dict:
        a = self.args
        spec_on = self.speculative or self.mode == "baseline_spec"
        info = {
            "model_path": a.model_path, "served_model_name": a.model_path, "version": "0.5.23+sim",
            "speculative_algorithm": (a.speculative_algorithm or "EAGLE3") if spec_on else None,
            "speculative_num_steps": (a.speculative_num_steps or 3) if spec_on else None,
            "speculative_eagle_topk": (a.speculative_eagle_topk or 1) if spec_on else None,
            "speculative_num_draft_tokens": (a.speculative_num_draft_tokens or 4) if spec_on else None,
            "sim_profile": "standin", "sim_speedup": a.sim_speedup,
        }
        if self.mode == "other_model":
            info["model_path"] = info["served_model_name"] = "other/model"
        if self.mode == "no_scale":
            del info["sim_speedup"]
        elif self.mode == "bad_scale":
            info["sim_speedup"] = "fast"
        elif self.mode == "wrong_scale":
            info["sim_speedup"] = 2 * a.sim_speedup
        return info

    async def generate(self, request: web.Request) -> web.Response:
        self.generated += 1
        if self.mode == "respawn" and self.generated == 2 and not os.environ.get("STANDIN_RESPAWNED"):
            await self.respawn(request)
        if self.mode == "freeze":
            os.kill(os.getpid(), signal.SIGSTOP)
        body = await request.json()
        n = int(body["sampling_params"]["max_new_tokens"])
        if self.mode == "wedge":
            await asyncio.sleep(3600)
        if self.mode == "slow":
            await asyncio.sleep(float(os.environ.get("STANDIN_SLOW_S", "5")))
        if self.mode == "http400" and n >= 16:
            return web.json_response({"error": {"message": f"standin refuses {n} tokens", "code": 400}},
                                     status=400)
        generated = max(1, n // 2) if self.mode == "half" else n
        reported = math.ceil(generated * 1.37) if self.mode == "inflate" else generated
        model_s = generated / (MODEL_TOK_PER_S * (0.8 * self.accept if self.speculative else 1.0))
        if self.mode == "fast":
            model_s /= 4
        wall_s = model_s / max(self.args.sim_speedup, 1e-9)
        await asyncio.sleep(wall_s)
        words = [f"w{(len(body.get('text') or '') * 31 + i * 7) % 997}" for i in range(generated)]
        meta = {"completion_tokens": reported, "prompt_tokens": 12, "e2e_latency": wall_s,
                "finish_reason": {"type": "length", "length": n}}
        if self.speculative or self.mode == "baseline_spec":
            verify = 1 if self.mode == "accept" else max(1, math.ceil((generated - 1) / self.accept))
            meta.update(spec_verify_ct=verify, spec_accept_length=reported / verify)
        if self.mode == "no_text":
            return web.json_response({"meta_info": meta})
        return web.json_response({"text": " ".join(words), "meta_info": meta})

    async def info(self, request: web.Request) -> web.Response:
        if self.mode == "no_server_info":
            raise web.HTTPNotFound()
        if self.mode == "freeze_info":
            os.kill(os.getpid(), signal.SIGSTOP)
        return web.json_response(self.server_info())

    def app(self) -> web.Application:
        async def ok(request):
            return web.Response(text="ok")

        async def health_generate(request):
            if self.mode != "drip_health":
                return web.Response(text="ok")
            resp = web.StreamResponse(headers={"Content-Length": "1000"})
            await resp.prepare(request)
            for _ in range(1000):
                await resp.write(b".")
                await asyncio.sleep(1.0)
            return resp

        async def flush(request):
            if self.mode == "freeze":
                os.kill(os.getpid(), signal.SIGSTOP)
            return web.Response(text="ok")

        async def models(request):
            return web.json_response({"object": "list", "data": [{"id": self.args.model_path}]})

        app = web.Application()
        app.router.add_get("/health", ok)
        app.router.add_get("/health_generate", health_generate)
        app.router.add_get("/server_info", self.info)
        app.router.add_get("/get_server_info", self.info)
        app.router.add_get("/v1/models", models)
        app.router.add_post("/flush_cache", flush)
        app.router.add_post("/generate", self.generate)
        return app


async def serve(args: argparse.Namespace, mode: str, make=None, label: str | None = None) -> None:
    """Serve ``make(args, mode)`` (a :class:`StandIn` by default, or a subclass of it) until SIGTERM or
    SIGINT, saying ``LABEL listening on http://HOST:PORT`` once it listens."""
    standin = (make or StandIn)(args, mode)
    runner = web.AppRunner(standin.app(), shutdown_timeout=0.1)
    await runner.setup()
    site = standin.site = web.TCPSite(runner, args.host, args.port)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print(f"{label or f'standin ({mode})'} listening on http://{args.host}:{port}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await runner.cleanup()


def main(argv: list[str]) -> None:
    args = parse(argv)
    asyncio.run(serve(args, mode_for(args, os.environ.get("STANDIN_MODES", ""))))


if __name__ == "__main__":
    main(sys.argv[1:])
