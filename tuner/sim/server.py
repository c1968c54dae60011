"""The simulated SGLang server process: ``python -m tuner.sim ARGS`` and ``tuner sim serve ARGS``.

Lifecycle, in SGLang's order:

1. Parse the command line (``--config`` merged under it); argparse errors exit 2.
2. Argument handling (:func:`tuner.sim.args.resolve_launch`): SGLang's warnings are logged; a setting
   SGLang refuses raises its AssertionError/TypeError/ValueError, printed as a traceback, exit 1,
   at once, before any loading. A bad ``--sim-profile`` prints one ``error:`` line and exits 2.
3. Bind ``--host:--port`` without listening, and "load" for ``--sim-load-seconds`` of wall time
   (``--sim-hang-on-start``: forever). SGLang opens its HTTP port only once its scheduler has loaded
   the model (http_server.py ``launch_server``: ``Engine._launch_subprocesses`` blocks, then
   ``_setup_and_run_http_server`` starts uvicorn), so a client's connection is refused while it
   loads; a bound socket that does not listen refuses it the same way, and holds the port so that
   ``--port 0`` is known (logged) at once.
4. After loading: ``--sim-fail-startup MSG`` prints MSG as the failing exception and exits 1; a KV
   budget beyond the profile's memory prints SGLang's "Not enough memory" error and exits 1 (SGLang
   allocates the KV cache after the weights are loaded); a setting SGLang refuses only once the
   models are loaded (an MLA tree on a chain-only backend: its draft backend's ValueError; any tree
   for Ling/Ring 2.5: the Lightning backend's NotImplementedError) or in the
   draft CUDA-graph capture (a draft tree larger than its candidates) exits 1 with SGLang's
   exception, without ever listening. One that fails in SGLang's own warmup request (a one-step
   tree too large; a tree on FA3 at a page size above 1 for a sliding-window model, whatever its
   steps) fails after the port opens, as there (``/health`` answers 503 meanwhile).
5. Ready: listen; "The server is fired up and ready to roll!"; serve until SIGTERM/SIGINT, then drain
   for up to half a second, abort what is still running (503 to those clients) and exit 0, within
   a second or two whatever is in flight (:meth:`tuner.sim.api.SimService.shut_down`).

The process owns nothing but its socket; a crash injected by ``--sim-crash-after-requests`` ends it
with ``os._exit(1)``.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import signal
import socket
import sys

from .args import LaunchPlan, parse_args, resolve_launch
from .server_info import kv_capacity_tokens

log = logging.getLogger("tuner.sim")

#: SGLang logs "[time] message"; the level is added so warnings and errors stand out.
LOG_FORMAT = "[%(asctime)s] %(levelname)s %(message)s"

#: Seconds SGLang 0.5.23 keeps an idle keep-alive connection open, unless ``SGLANG_TIMEOUT_KEEP_ALIVE``
#: says otherwise (``srt/environ.py``: ``EnvInt(5)``).
SGLANG_KEEP_ALIVE_DEFAULT_S = 5


def keep_alive_s() -> int:
    """Seconds an idle keep-alive connection stays open: ``SGLANG_TIMEOUT_KEEP_ALIVE``, read as SGLang
    0.5.23 reads it (``srt/environ.py`` ``EnvInt.parse`` and ``EnvField.get``: an integer, or a warning
    and the default 5), which its HTTP server hands to uvicorn (``entrypoints/http_server.py``
    ``launch_server``: ``timeout_keep_alive``). aiohttp's own default keeps one an hour, so a client that
    reuses connections SGLang closes after 5 s ran clean here alone. 0 or less: closed after each answer,
    as uvicorn's timer then fires at once."""
    value = os.environ.get("SGLANG_TIMEOUT_KEEP_ALIVE")
    if value is None:
        return SGLANG_KEEP_ALIVE_DEFAULT_S
    try:
        return max(int(value), 0)
    except ValueError:
        log.warning(f'Invalid value for SGLANG_TIMEOUT_KEEP_ALIVE: "{value}" is not a valid integer value, '
                    f'using default "{SGLANG_KEEP_ALIVE_DEFAULT_S}"')
        return SGLANG_KEEP_ALIVE_DEFAULT_S


def _setup_logging(level: str) -> None:
    logging.basicConfig(level=getattr(logging, level.upper()), format=LOG_FORMAT,
                        datefmt="%Y-%m-%d %H:%M:%S", stream=sys.stderr, force=True)


def _scheduler_exception(message: str, frame: str = '  File "sglang/srt/model_executor/model_runner.py", '
                         'in init_memory_pool\n') -> None:
    """How SGLang reports a scheduler that died during start-up: a traceback, then the parent's line
    (managers/scheduler.py: "Scheduler hit an exception"; entrypoints/engine.py: the SIGQUIT line)."""
    log.error("Scheduler hit an exception: Traceback (most recent call last):\n"
              '  File "sglang/srt/managers/scheduler.py", in run_scheduler_process\n'
              f"{frame}{message}")
    log.error("Received sigquit from a child process. It usually means the child failed.")


def _scheduler_died(task: asyncio.Task) -> None:
    """The scheduler loop ended with an exception (a thread the kernel refused it: ``RuntimeError:
    can't start new thread`` under ``ulimit -u``): the server dies as SGLang's does when its
    scheduler raises (managers/scheduler.py ``run_scheduler_process``: "Scheduler hit an exception"
    and the traceback, SIGQUIT to the parent, whose handler logs its line and kills the process
    tree, entrypoints/engine.py). QA (qa222): the loop died silently and the server, listening on,
    answered no request: a trial "hung", its log saying nothing."""
    if task.cancelled() or task.exception() is None:
        return
    import traceback

    exc = task.exception()
    log.error("Scheduler hit an exception: " + "".join(traceback.format_exception(exc)).rstrip())
    log.error("Received sigquit from a child process. It usually means the child failed.")
    for stream in (sys.stderr, sys.stdout):
        stream.flush()
    os._exit(1)


#: runner_backend_utils/__init__.py, CUDA_GRAPH_CAPTURE_FAILED_MSG, appended to a capture failure.
CUDA_GRAPH_CAPTURE_FAILED_MSG = (
    "Possible solutions:\n"
    "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
    "2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\n"
    "3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled. "
    "(Not recommended. Huge performance loss)\n"
    "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n")


def _startup_violation(plan: LaunchPlan) -> None:
    """SGLang's failure for a rule broken after the model load (tuner.sglang.rules, STAGE_STARTUP)."""
    v, spec = plan.startup_violation, plan.spec
    message = f"{v.sglang_exception}: {v.sglang_message}"
    if v.rule == "mla-tree-backend":
        # speculative/draft_utils.py builds the MLA multi-step draft backend; its __init__ raises.
        frame = '  File "sglang/srt/layers/attention/flashinfer_mla_backend.py", in __init__\n'
    elif v.rule == "swa-tree-page-size":
        # The target verify of SGLang's warmup request, eager or CUDA-graph replay (the capture skips
        # it): flashattention_backend.py line 1177/3277 calls this, which asserts page_size == 1 (3417).
        frame = ('  File "sglang/srt/layers/attention/flashattention_backend.py", '
                 'in _init_sliding_window_attn_spec_metadata\n')
    elif v.rule == "lightning-tree":
        # the target's model runner builds its linear-attention backend (attention_registry.py line 549)
        frame = '  File "sglang/srt/layers/attention/linear/lightning_backend.py", in __init__\n'
    elif v.rule in ("draft-backend-kind", "backend-no-spec", "backend-gpu"):
        # a model runner builds its attention backend as it starts (attention_registry.py).
        frame = ('  File "sglang/srt/model_executor/model_runner_components/attention_backend_setup.py", '
                 'in _build_full_attention_backend_from_str\n')
    elif spec is not None and spec.num_steps > 1:
        # eagle_draft_cuda_graph_runner.py wraps the capture's RuntimeError in a bare Exception.
        frame = '  File "sglang/srt/speculative/eagle_draft_cuda_graph_runner.py", in __init__\n'
        message = f"Exception: Capture cuda graph failed: {v.sglang_message}\n{CUDA_GRAPH_CAPTURE_FAILED_MSG}"
    else:
        # One step: no draft graph; SGLang's own warmup request (http_server.py) hits the draft tree.
        frame = '  File "sglang/srt/speculative/eagle_utils.py", in organize_draft_results\n'
    _scheduler_exception(message, frame)


def _fails_in_warmup(plan: LaunchPlan) -> bool:
    """Whether SGLang meets the plan's startup violation in its warmup request, which runs once the
    HTTP server is up (see :func:`_startup_violation`), rather than before the port opens."""
    v, spec = plan.startup_violation, plan.spec
    if v is not None and v.rule == "swa-tree-page-size":  # the first target verify, at any step count
        return True
    return (v is not None
            and v.rule not in ("mla-tree-backend", "draft-backend-kind", "backend-no-spec", "backend-gpu",
                               "lightning-tree")
            and not (spec is not None and spec.num_steps > 1))


def _reserve(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` but not listening (connections are refused until
    :func:`_serve` listens on it). ``OSError`` when the address is taken."""
    family, kind, proto, _, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM,
                                                         flags=socket.AI_PASSIVE)[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as aiohttp's TCPSite does
        sock.bind(address)
    except OSError:
        sock.close()
        raise
    return sock


def _context_len(ns, model) -> int:
    """Tokens of context each running request holds in the KV budget check (:meth:`PerfModel.kv_budget_ok`):
    ``--context-length`` when given, else the profile's ``default_context_tokens``, a typical request's
    cached context, as :mod:`tuner.engine.model_backend` and :mod:`tuner.sim.landscape` size it. Not the
    model's context length, which the server announces and enforces (``service.resolved``)."""
    return ns.context_length or model.profile.runtime.default_context_tokens


def _graph_bs(ns) -> int | None:
    """The largest decode batch captured as a CUDA graph (None: the profile's default), as SGLang sizes
    it: a ``--cuda-graph-bs-decode`` list or ``--cuda-graph-config``'s decode sizes too
    (:func:`tuner.sglang.arg_types.decode_graph_max_bs`)."""
    from ..sglang.arg_types import decode_graph_max_bs

    return decode_graph_max_bs(vars(ns))


def _max_running_fitting(model, ns, limit: int = 4096) -> int:
    """Without speculation and without --max-running-requests SGLang sizes the batch from memory:
    the largest count (up to ``limit``) whose KV cache fits."""
    lo, hi = 1, limit
    ctx = _context_len(ns, model)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        ok, _ = model.kv_budget_ok(None, mid, ctx, mem_fraction_static=ns.mem_fraction_static,
                                   cuda_graph_max_bs=_graph_bs(ns))
        lo, hi = (mid, hi) if ok else (lo, mid - 1)
    return lo


async def _start_up(service, ns, plan: LaunchPlan, model, listen) -> int | None:
    """Simulated model loading; ``listen()`` opens the HTTP port once SGLang's would be open.
    Returns an exit code on failure, ``None`` once ready."""
    log.info(f"Load weight begin. (simulated: {ns.sim_load_seconds:g} s, profile {ns.sim_profile})")
    if ns.sim_hang_on_start:
        log.info("Simulated hang on start (--sim-hang-on-start): the server never becomes ready.")
        await asyncio.Event().wait()
    await asyncio.sleep(ns.sim_load_seconds)
    log.info("Load weight end.")
    if ns.sim_fail_startup:
        _scheduler_exception(ns.sim_fail_startup)
        return 1
    mrr = plan.max_running_requests or _max_running_fitting(model, ns)
    ok, message = model.kv_budget_ok(plan.spec, mrr, _context_len(ns, model),
                                     mem_fraction_static=ns.mem_fraction_static,
                                     cuda_graph_max_bs=_graph_bs(ns))
    if not ok:
        _scheduler_exception(message)
        return 1
    # After the target's memory pool: the draft worker, its attention backend and CUDA graphs; the
    # warmup request comes after the HTTP server starts (http_server.py _execute_server_warmup).
    if plan.startup_violation is not None:
        if _fails_in_warmup(plan):
            await listen()
        _startup_violation(plan)
        return 1
    if plan.max_running_requests is None:
        service.set_max_running_requests(mrr)
    # SGLang 0.5.23's line (srt/managers/scheduler.py, "Print debug info"): context_len is the model's
    # context length, the one /server_info, /v1/models and the 400 for a long request say (QA: this
    # line said 512, the KV check's per-request context, where the server announced and enforced 8192)
    log.info(f"max_total_num_tokens={kv_capacity_tokens(model, service.resolved)}, "
             f"chunked_prefill_size={service.resolved.get('chunked_prefill_size')}, "
             f"max_prefill_tokens={service.resolved.get('max_prefill_tokens')}, max_running_requests={mrr}, "
             f"context_len={service.resolved['context_length']}")
    log.info(f"Simulated speculative decoding: {plan.spec.label() if plan.spec else None}")
    # Everything loaded so far lives as long as the server: keep it out of the garbage collector's
    # full collections, whose pauses (tens of ms with the schemas and tables loaded) would show up
    # as model seconds at a high --sim-speedup.
    gc.freeze()
    await listen()
    service.ready = True
    log.info(f"Simulated SGLang ready: wall clock runs {ns.sim_speedup:g}x model time")
    log.info("The server is fired up and ready to roll!")
    return None


async def _serve(ns, plan: LaunchPlan, model) -> int:
    from aiohttp import web

    from .api import SimService

    service = SimService(plan, model, profile_name=model.profile.name, speedup=ns.sim_speedup,
                         seed=ns.sim_seed, crash_after_requests=ns.sim_crash_after_requests)
    # handler_cancellation: a client that disconnects cancels its handler, which aborts the request
    # in the engine (SGLang aborts on disconnect). shutdown_timeout: after SIGTERM the handlers
    # have been answered (SimService.shut_down); nothing should hold the exit for aiohttp's 60 s.
    # keepalive_timeout: idle connections close when SGLang's do (keep_alive_s).
    runner = web.AppRunner(service.build_app(), access_log=None, handle_signals=False,
                           handler_cancellation=True, shutdown_timeout=0.5, keepalive_timeout=keep_alive_s())
    await runner.setup()
    try:
        sock = _reserve(ns.host, ns.port)
    except OSError as exc:
        log.error(f"cannot bind {ns.host}:{ns.port}: {exc.strerror or exc}; choose another --port")
        await runner.cleanup()
        return 1
    # The bound address, so a caller that asked for --port 0 learns the port (tests/support/simproc.py).
    host, port = sock.getsockname()[:2]
    log.info(f"HTTP port bound; listening on http://{host}:{port} once the model is loaded (until then "
             "connections are refused, as SGLang's port is closed while it loads)")

    async def listen() -> None:
        await web.SockSite(runner, sock).start()
        log.info(f"HTTP server listening on http://{host}:{port}")

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    engine_task = asyncio.create_task(service.engine.run())
    engine_task.add_done_callback(_scheduler_died)
    startup = asyncio.create_task(_start_up(service, ns, plan, model, listen))
    stopper = asyncio.create_task(stop.wait())
    code = 0
    try:
        await asyncio.wait({startup, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if startup.done() and startup.result() is not None:
            code = startup.result()
        else:
            await stopper
            log.info("Received SIGTERM; shutting down.")
            await service.shut_down()
    finally:
        for task in (startup, stopper, engine_task):
            task.cancel()
        await asyncio.gather(startup, stopper, engine_task, return_exceptions=True)
        await runner.cleanup()
        sock.close()  # never listened on (a failed start), or already closed by the site
    return code


def main(argv: list[str] | None = None) -> int:
    """Run the simulated server; returns the exit code (argparse errors exit 2 themselves; a bad
    ``--sim-*`` value or ``--port`` out of 0-65535 is one line, exit 2)."""
    ns = parse_args(sys.argv[1:] if argv is None else argv)
    if not 0 <= ns.port <= 65535:  # SGLang's parser takes any int; the bind would end in a traceback
        print(f"error: --port: {ns.port} is no TCP port; give 0 to 65535 (0: a free one)", file=sys.stderr)
        return 2
    _setup_logging(ns.log_level)
    from ..config.yamlfile import ConfigError
    from .model import PerfModel, load_profile

    try:
        profile = load_profile(ns.sim_profile)
    except ConfigError as exc:
        print(f"error: --sim-profile: {exc}", file=sys.stderr)
        return 2
    # The profile plays the model's config.json and the GPUs, which SGLang's argument handling reads.
    plan = resolve_launch(ns, log, profile)  # SGLang's exceptions escape: traceback on stderr, exit 1
    model = PerfModel(profile, noise=ns.sim_noise if ns.sim_noise is not None else 0.0)
    log.info(f"server_args={plan.server_args!r}")
    return asyncio.run(_serve(ns, plan, model))
