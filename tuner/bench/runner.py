"""``run_suite``: the article's benchmark, phase by phase, against one running server.

Order: read ``/server_info`` (resolved server args, version, ``sim_speedup``); warm-up requests;
flush; the single requests (every prompt of :meth:`Suite.single_prompts` at each of its
:meth:`Suite.single_lengths`, ``repeats`` times, one at a time); then for each concurrency C, flush
and submit C requests at once, request i using prompt ``i % n`` at its :meth:`Suite.sweep_tokens`
(repeated per ``sweep.repeats`` / adaptive mode). The same suite sends the same requests every time.
With ``api="chat"`` every request carries its prompt's chat turns (:meth:`PromptSpec.chat_messages`).

A study runs the same requests in stages that decide early (``plan``: :func:`tuner.bench.plan.
stage_plan`; a flush before each stage's single requests and before every batch, as in the
article's order). After every stage but the last, ``after_stage(index, name, result)`` sees the
result so far; when it returns true the run stops there: ``stopped_after`` names the stage,
``complete`` is false, and everything measured is kept. ``result.stages`` records where each stage
ended (:meth:`SuiteResult.stage_results`).

Contract: the caller owns the server; ``run_suite`` never starts or stops it. A request that fails or
times out is recorded and the suite goes on. A server that stops accepting connections after it
was up ends the run with :class:`ServerDiedError`; one that stops answering, or that outlives the
caller's ``deadline_s``, with :class:`ServerHungError` (the rules: :mod:`tuner.bench.watch`). Both
carry ``partial``, everything measured. The time scale is never assumed: a server that says it is
the simulator (``sim_speedup``, ``sim_profile`` or a ``+sim`` version in ``/server_info``) must give
a positive finite ``sim_speedup``, else :class:`ServerInfoError` before any request; any other
server runs in wall time (scale 1, as SGLang does).
``/server_info`` is read again after the last phase (``server_info_after``): a server whose
arguments changed meanwhile measured no one setting (``tuner.engine.verify.changed_problem``).
``on_event(phase, info)`` is called (in the calling thread; it must not raise) for progress displays:

* ``server_info``: ``version``, ``time_scale``, ``resolved_spec`` (dict or None)
* ``warmup`` / ``single``: ``prompt``, ``max_tokens``, ``repeat`` (before the request)
* ``flush``: ``before`` (the phase it precedes), ``ok``
* ``sweep``: ``concurrency``, ``max_tokens``, ``repeat`` (before the batch is submitted)
* ``stage``: ``stage``, ``index``, ``stages`` (before a stage of a ``plan`` starts)
* ``done``: ``summary`` (:meth:`SuiteResult.summary`); ``died`` and ``hung``: ``error``

Every ``info`` also has ``step`` (warm-up requests, single requests and sweep batches started so
far) and ``total_steps`` (planned; it grows in adaptive mode).

Why one module of over 400 lines: the run is one state machine (:class:`_SuiteRun`: phases, stages,
flushes, the watchdog and the partial result a lost server leaves) whose steps share that state; the
HTTP client (:mod:`tuner.bench.client`), the hang rules (:mod:`tuner.bench.watch`), the staged
order (:mod:`tuner.bench.plan`) and the result (:mod:`tuner.bench.result`) already live elsewhere.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import math
import time
from datetime import datetime, timezone
from typing import Any, Awaitable, Callable, Sequence

from ..config.suite import Suite, load_suite
from ..config.wording import counted
from .client import BenchClient, BenchError, ServerUnreachableError
from .open_files import TunerOutOfFiles
from .plan import Stage
from .records import RequestRecord
from .result import SuiteResult, resolved_spec_from_info, says_adaptive, says_autoregressive, says_simulator
from .stats import narrow_enough
from .watch import PROBE_PATH, HangPolicy, Watchdog

EventHandler = Callable[[str, dict], None]
#: ``after_stage(index, name, result_so_far) -> stop``
AfterStage = Callable[[int, str, SuiteResult], bool]


class ServerLostError(BenchError):
    """The suite could not finish. ``partial`` is the result so far (``complete`` false, ``error``
    set); save it, it holds every request made."""

    def __init__(self, message: str, partial: SuiteResult):
        super().__init__(message)
        self.partial = partial


class ServerDiedError(ServerLostError):
    """The server stopped accepting connections mid-suite (the process is gone)."""


class ServerHungError(ServerLostError):
    """The server stopped answering: ``/server_info`` timed out, requests timed out in a row, the
    watchdog's probes went unanswered, or the caller's deadline passed (:mod:`tuner.bench.watch`);
    ``reason`` says which: ``server_info``, ``timeouts``, ``silence`` or ``deadline``."""

    def __init__(self, message: str, partial: SuiteResult, reason: str):
        super().__init__(message, partial)
        self.reason = reason


class ServerInfoError(BenchError):
    """``/server_info`` says the server is the simulator but gives no usable time scale."""


class _Died(Exception):
    pass


class _Hung(Exception):
    def __init__(self, message: str, reason: str):
        super().__init__(message)
        self.reason = reason


def time_scale_from_info(info: dict) -> float:
    """Model seconds per wall second of the server ``/server_info`` describes, never assumed: the
    simulator's own ``sim_speedup`` (a positive finite number, else :class:`ServerInfoError`), 1 for
    a server that says nothing of a sped-up clock (SGLang runs in wall time)."""
    if not says_simulator(info):
        return 1.0
    scale = info.get("sim_speedup")
    number = isinstance(scale, (int, float)) and not isinstance(scale, bool)
    if not number or not math.isfinite(scale) or scale <= 0:
        raise ServerInfoError(f"/server_info says the server is the simulator but its sim_speedup is "
                              f"{scale!r}, not a positive number: wall time cannot be converted to "
                              "model time")
    return float(scale)


def run_suite(base_url: str, suite: Suite | str | dict, *, api: str = "generate", stream: bool = False,
              on_event: EventHandler | None = None, deadline_s: float | None = None,
              hang: HangPolicy | None = None, plan: Sequence[Stage] | None = None,
              after_stage: AfterStage | None = None) -> SuiteResult:
    """Run ``suite`` against the server at ``base_url`` and return its :class:`SuiteResult`: in the
    article's order, or in ``plan``'s stages (see the module docstring for ``after_stage``).

    Call from synchronous code (it runs its own event loop). ``deadline_s``: wall seconds the whole
    run may take (None: no limit beyond the hang rules); ``hang``: when a server counts as hung
    (default :class:`HangPolicy`). Raises :class:`~tuner.bench.client.ServerUnreachableError` when
    nothing listens at ``base_url``, :class:`ServerDiedError` when the server dies mid-suite,
    :class:`ServerHungError` when it stops answering or outlives ``deadline_s``,
    :class:`ServerInfoError` for an unusable time scale, ``ConfigError`` for a bad suite.
    """
    suite = load_suite(suite)
    run = _SuiteRun(base_url, suite, api, stream, on_event, deadline_s, hang or HangPolicy(), plan, after_stage)
    return asyncio.run(run.run())


class _SuiteRun:
    def __init__(self, base_url: str, suite: Suite, api: str, stream: bool, on_event: EventHandler | None,
                 deadline_s: float | None, hang: HangPolicy, plan: Sequence[Stage] | None = None,
                 after_stage: AfterStage | None = None):
        self.suite, self.on_event = suite, on_event
        self.deadline_s, self.hang = deadline_s, hang
        self.watchdog = Watchdog(base_url, hang)
        self.timed_out_steps = 0  #: steps in a row that timed out with nothing answered
        self.plan, self.after_stage = (list(plan) if plan else None), after_stage
        self.client = BenchClient(base_url, api=api, stream=stream, timeout_s=suite.timeout_s,
                                  temperature=suite.temperature, ignore_eos=suite.ignore_eos)
        self.result = SuiteResult(suite=suite.to_dict(), base_url=base_url.rstrip("/"), api=api,
                                  stream=stream,
                                  started_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
        self.step = 0
        self.total_steps = self._planned_steps()

    def _planned_steps(self) -> int:
        s = self.suite
        return (s.warmup.requests + s.n_single_requests() * s.single.repeats
                + len(s.sweep.concurrencies) * s.sweep.repeats)

    def _emit(self, phase: str, **info: Any) -> None:
        if phase in ("warmup", "single", "sweep"):
            self.step += 1
            self.total_steps = max(self.total_steps, self.step)
        if self.on_event is not None:
            self.on_event(phase, {**info, "step": self.step, "total_steps": self.total_steps})

    async def run(self) -> SuiteResult:
        t0 = time.perf_counter()
        try:
            async with self.client:
                try:
                    await self._read_server_info()
                    await self._guarded(t0)
                    await self._read_after()
                except (_Died, _Hung) as lost:
                    self.result.error = str(lost)
                    self._finish(t0)
                    if isinstance(lost, _Died):
                        self._emit("died", error=str(lost))
                        raise ServerDiedError(str(lost), self.result) from None
                    self._emit("hung", error=str(lost), reason=lost.reason)
                    raise ServerHungError(str(lost), self.result, lost.reason) from None
                except TunerOutOfFiles as exc:  # the tuner's limit: what it measured so far is a record only
                    self.result.error = str(exc)
                    self._finish(t0)
                    exc.partial = self.result
                    raise
        finally:
            self.result.duration_s = time.perf_counter() - t0
        self.result.complete = self.result.stopped_after is None
        self._finish(t0)
        self._emit("done", summary=self.result.summary())
        return self.result

    async def _phases(self) -> None:
        await self._warmup()
        if self.plan is None:
            await self._single()
            await self._sweep()
        else:
            await self._staged()

    async def _guarded(self, t0: float) -> None:
        """The phases, beside the watchdog, within the deadline: raises :class:`_Hung` when the
        watchdog finds the server silent or the deadline passes (the phases are cancelled: a
        request in flight is abandoned, nothing it measured is lost since it measured nothing)."""
        work = asyncio.ensure_future(self._phases())
        watch = asyncio.ensure_future(self.watchdog.run())
        left = None if self.deadline_s is None else max(0.0, t0 + self.deadline_s - time.perf_counter())
        try:
            done, _ = await asyncio.wait({work, watch}, timeout=left, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (work, watch):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task
                elif not task.cancelled():
                    # Retrieved, so asyncio does not log it when the task is collected: a signal's
                    # SystemExit (SIGTERM, tuner/server/signals.py) raised in a step of the task
                    # (after_stage waiting on the storage) ends the task and also leaves the event
                    # loop on its own, and the loop's shutdown cancels this coroutine (QA, qa154:
                    # "Task exception was never retrieved ... SystemExit: 143" on a clean stop).
                    task.exception()
        if work in done:
            work.result()  # the phases' own end: done, or _Died / _Hung
        elif watch in done:
            raise _Hung(watch.result(), "silence")
        else:
            raise _Hung(f"the run passed its deadline of {self.deadline_s:.0f} s (wall) with "
                        f"{counted(sum(1 for r in self.result.records if r.ok), 'request')} answered", "deadline")

    def _finish(self, t0: float) -> None:
        self.result.duration_s = time.perf_counter() - t0
        self.result.refresh()

    async def _refuse_over_context(self, info: dict | None) -> None:
        """Raise :class:`~tuner.bench.context.SuiteOverContext` before any request when the suite asks
        a request more tokens than the server's context holds (:mod:`tuner.bench.context`);
        ``/v1/models`` is asked only when ``/server_info`` gives no context length."""
        from .context import SuiteOverContext, context_length, unfit_request

        if isinstance(info, dict) and info.get("allow_auto_truncate") is True:
            return  # --allow-auto-truncate: SGLang lowers such a request's max_new_tokens, refuses none
        known = context_length(info, None)
        if known is None:
            known = context_length(None, await self.client.models())
        if known is None:
            return
        problem = unfit_request(self.suite, *known)
        if problem is not None:
            raise SuiteOverContext(problem)

    async def _read_server_info(self) -> None:
        try:
            info = await self.client.server_info()
        except ServerUnreachableError as exc:
            if not exc.timed_out:
                raise
            raise _Hung(str(exc), "server_info") from None
        res = self.result
        res.server_info = info
        if info is None:
            res.warnings.append("server has no /server_info or /get_server_info: resolved server "
                                "args and version unknown, figures in wall time")
        else:
            version = info.get("version")
            res.server_version = None if version is None else str(version)
            # model seconds per wall second (the simulator's clock runs sim_speedup times faster)
            res.time_scale = time_scale_from_info(info)
            res.resolved_spec = resolved_spec_from_info(info)
            # as `tuner bench` and a study judge verify steps: by the flags the server says (as numbers),
            # or none at all from one that says it runs no algorithm; the client bounds the rest
            # (an adaptive server's flags are only the steps it starts at: the client bounds its steps)
            spec = res.resolved_spec
            self.client.speculation_judged = ((isinstance(getattr(spec, "num_steps", None), int)
                                               and not says_adaptive(info))
                                              or (spec is None and says_autoregressive(info)))
        await self._refuse_over_context(info)
        # The suite's per-request timeout is in model seconds: on the simulator the wall clock runs
        # time_scale times faster, so a study's outcome does not depend on --sim-speedup.
        self.client.set_time_scale(res.time_scale)
        self._emit("server_info", version=res.server_version, time_scale=res.time_scale,
                   resolved_spec=None if res.resolved_spec is None else res.resolved_spec.as_dict())

    async def _read_after(self) -> None:
        """``/server_info`` read again once the phases are done, whatever the server
        (:attr:`SuiteResult.server_info_after`): a server whose arguments changed meanwhile was not
        the one the figures are said to be of (``tuner.engine.verify.changed_problem``). For the
        simulator it also brings its own account of whether it kept up with model time over the
        whole suite (``sim_timekeeping``, :mod:`tuner.sim.streaming`): a server frozen or starved for
        seconds answers late, and its figures are distorted though every answer came. A server that
        does not answer now keeps its figures (None)."""
        if not isinstance(self.result.server_info, dict):
            return
        try:
            info = await self.client.server_info()
        except ServerUnreachableError:
            return
        if not isinstance(info, dict):
            return
        self.result.server_info_after = info
        if says_simulator(self.result.server_info) and isinstance(info.get("sim_timekeeping"), dict):
            self.result.timekeeping = info["sim_timekeeping"]

    # ---- phases --------------------------------------------------------------------------------

    async def _warmup(self) -> None:
        w = self.suite.warmup
        for i, p in enumerate(self.suite.cycled(w.requests)):
            self._emit("warmup", prompt=p.name, max_tokens=w.max_tokens, repeat=i)
            await self._one(RequestRecord("warmup", p.name, w.max_tokens, repeat=i), p)

    async def _repeated(self, minimum: int, measure: Callable[[int], Awaitable[float | None]]) -> None:
        """Call ``measure(repeat)`` ``minimum`` times; in adaptive mode go on until the figures it
        returns (None for a failure) have a narrow enough 95% interval, or ``max_repeats``."""
        adaptive = self.suite.adaptive
        values: list[float] = []
        repeat = 0
        while True:
            value = await measure(repeat)
            if value is not None:
                values.append(value)
            repeat += 1
            if repeat >= minimum and (adaptive is None or repeat >= adaptive.max_repeats
                                      or narrow_enough(values, adaptive.rel_ci95)):
                return

    async def _single(self) -> None:
        suite, single = self.suite, self.suite.single
        if not suite.n_single_requests():
            return
        await self._flush("single")
        for p in suite.single_prompts():
            for length in suite.single_lengths(p):
                async def measure(repeat: int, p=p, length=length) -> float | None:
                    self._emit("single", prompt=p.name, max_tokens=length, repeat=repeat)
                    rec = await self._one(RequestRecord("single", p.name, length, repeat=repeat), p)
                    return rec.tok_per_s

                await self._repeated(single.repeats, measure)

    async def _sweep(self) -> None:
        for c in self.suite.sweep.concurrencies:
            await self._repeated(self.suite.sweep.repeats, lambda repeat, c=c: self._batch(c, repeat))

    async def _staged(self) -> None:
        """The plan's stages in order; after each but the last, ``after_stage`` may stop the run."""
        prompts = {p.name: p for p in self.suite.prompts}
        last = len(self.plan) - 1
        for i, stage in enumerate(self.plan):
            self._emit("stage", stage=stage.name, index=i, stages=len(self.plan))
            if stage.single:
                await self._flush("single")
            for s in stage.single:
                self._emit("single", prompt=s.prompt, max_tokens=s.max_tokens, repeat=s.repeat)
                await self._one(RequestRecord("single", s.prompt, s.max_tokens, repeat=s.repeat), prompts[s.prompt])
            for b in stage.sweep:
                await self._batch(b.concurrency, b.repeat)
            if i == last and self.suite.adaptive is not None:
                await self._top_up()
            self.result.stages.append({"name": stage.name, "records": len(self.result.records)})
            if i < last and self.after_stage is not None:
                self.result.refresh()
                if self.after_stage(i, stage.name, self.result):
                    self.result.stopped_after = stage.name
                    return

    async def _top_up(self) -> None:
        """Adaptive mode after the plan's fixed repeats: each row repeated until narrow enough."""
        recs = self.result.records
        for p in self.suite.single_prompts():
            for length in self.suite.single_lengths(p):
                async def one(repeat: int, p=p, length=length) -> float | None:
                    self._emit("single", prompt=p.name, max_tokens=length, repeat=repeat)
                    return (await self._one(RequestRecord("single", p.name, length, repeat=repeat), p)).tok_per_s

                done = [r.tok_per_s for r in recs if r.phase == "single" and r.prompt == p.name
                        and r.max_tokens == length]
                await self._until_narrow(done, one)
        for c in self.suite.sweep.concurrencies:
            batches: dict[int, list[RequestRecord]] = {}
            for r in recs:
                if r.phase == "sweep" and r.concurrency == c:
                    batches.setdefault(r.repeat, []).append(r)
            await self._until_narrow([_aggregate(b) for b in batches.values()],
                                     lambda repeat, c=c: self._batch(c, repeat))

    async def _until_narrow(self, values: list, measure: Callable[[int], Awaitable[float | None]]) -> None:
        adaptive, done = self.suite.adaptive, len(values)
        ok = [v for v in values if v is not None]
        while done < adaptive.max_repeats and not narrow_enough(ok, adaptive.rel_ci95):
            value = await measure(done)
            if value is not None:
                ok.append(value)
            done += 1

    async def _batch(self, c: int, repeat: int) -> float | None:
        """One sweep batch: C requests at once; its aggregate tok/s (None when all failed)."""
        await self._flush(f"sweep C={c}")
        await self.client.open_connections(c)
        batch = self.suite.cycled(c)
        self._emit("sweep", concurrency=c, max_tokens=self.suite.sweep_tokens(batch[0]), repeat=repeat)
        records = [RequestRecord("sweep", p.name, self.suite.sweep_tokens(p), repeat=repeat,
                                 concurrency=c, index=i) for i, p in enumerate(batch)]
        bodies = [self.client.prepare(p.text or "", r.max_tokens, self._messages(p))
                  for r, p in zip(records, batch)]
        with _no_collection():
            await asyncio.gather(*(self.client.request(r, "", body) for r, body in zip(records, bodies)))
        self.result.records.extend(records)
        await self._check_alive(records)
        return _aggregate(records)

    # ---- steps ---------------------------------------------------------------------------------

    def _messages(self, prompt) -> list[dict] | None:
        return prompt.chat_messages() if self.client.api == "chat" else None

    async def _one(self, record: RequestRecord, prompt) -> RequestRecord:
        with _no_collection():  # as a batch's: a pause inside one request is read as its serving time
            await self.client.request(record, prompt.text or "", messages=self._messages(prompt))
        self.result.records.append(record)
        await self._check_alive([record])
        return record

    async def _check_alive(self, records: list[RequestRecord]) -> None:
        """After connection errors, tell a dead server (refused) from a transient failure; after
        timeouts, count the steps in a row that timed out (:class:`HangPolicy`)."""
        if any(r.error_kind in ("connection", "disconnected") for r in records):
            if not await self.client.alive():
                done = sum(1 for r in self.result.records if r.ok)
                raise _Died(f"server at {self.client.base_url} stopped accepting connections "
                            f"mid-suite, after {done} successful requests")
        if any(r.ok or r.late for r in records):  # an answer, even a late one: the server is not stuck
            self.timed_out_steps = 0
        elif any(r.error_kind == "timeout" for r in records):
            self._timed_out(records[0].error or "timed out")

    def _timed_out(self, what: str) -> None:
        self.timed_out_steps += 1
        if self.timed_out_steps >= self.hang.timed_out_steps:
            silent = (": the server stopped generating" if self.watchdog.answered else
                      f"; GET {PROBE_PATH} went unanswered too: the server stopped answering")
            raise _Hung(f"{counted(self.timed_out_steps, 'step')} in a row timed out with no answer ({what}){silent}",
                        "timeouts")

    async def _flush(self, before: str) -> None:
        if not self.suite.flush_cache or not self.client.flush_supported:
            return
        try:
            outcome = await self.client.flush_cache()
        except Exception as exc:  # noqa: BLE001 - any failure to reach it: is the server still up?
            if not await self.client.alive():
                raise _Died(f"server at {self.client.base_url} stopped accepting connections "
                            f"mid-suite (flush before {before})") from None
            if isinstance(exc, asyncio.TimeoutError):
                self._timed_out(f"POST /flush_cache before {before} got no answer")
            outcome = {"ok": False, "attempts": 1, "status": None,
                       "message": f"{type(exc).__name__}: {exc}", "at_s": self.client.now()}
        outcome["before"] = before
        self.result.flushes.append(outcome)
        if not outcome["ok"]:
            self.result.warnings.append(f"flush_cache before {before} failed: {outcome['message']}")
        self._emit("flush", before=before, ok=outcome["ok"])


def _aggregate(records: list[RequestRecord]) -> float | None:
    """A batch's aggregate tok/s (wall): its successful tokens over its span; None when all failed."""
    ok = [r for r in records if r.ok]
    if not ok:
        return None
    span = max(r.end_s for r in records) - min(r.start_s for r in records)
    return sum(r.completion_tokens or 0 for r in ok) / span if span > 0 else None


@contextlib.contextmanager
def _no_collection():
    """Python's cyclic garbage collector paused while a measured request or sweep batch is in
    flight (re-enabled as it was after). A full collection in a tuner process with its study loaded
    takes 50-100 ms of CPU, several hundred ms of wall time on a loaded machine; one that falls
    between two submissions of a batch holds the event loop and spreads the batch by that much (QA: 0.43 s, the last 3 of
    32 requests submitted late). The batch's span runs from its first submission, so on SGLang the
    pause is counted as serving time, and on the simulator as ``sim_speedup`` times as much (20x:
    a baseline's C=32 read 52 tok/s instead of ~500, and the study's trial failed as bad_response).
    The collection the batch skipped runs after it, outside every measured span."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
