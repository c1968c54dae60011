"""Continuous batching in model time: the simulated SGLang scheduler.

:class:`BatchEngine` runs requests the way SGLang's scheduler does, on a model clock: requests wait
in a queue; at each step boundary as many as fit under ``max_running_requests`` are admitted and
prefilled together (a prefill forward, which yields each one's first token, as SGLang's extend
batch does); then decode steps run over every running request, each step taking
``model.decode_step_time_s(batch_size, spec)`` times a jitter factor, and giving each request one
token (autoregressive) or a sampled accept length (speculative). A request leaves the batch when it
has ``max_new_tokens`` tokens.

Time is kept honestly on a small, busy machine. Wall clock = model time / ``speedup`` from a fixed
origin, so every event has an absolute wall deadline and lateness never accumulates. The engine
does not sleep per step: it computes steps in a tight loop up to the next *externally visible*
event (a request finishing, or a stream chunk being due), or at most ``lookahead_wall_s`` of wall
time ahead, and sleeps until that deadline.
Steps computed ahead are provisional: if a request arrives (or is aborted) during the sleep, before
the event step began, the engine rolls back to the snapshot taken before the look-ahead and replays
the same steps (same random draws) up to the arrival, so the newcomer joins at the first step
boundary after it arrived, exactly as if time had been simulated step by step.

Ownership: the engine belongs to one asyncio event loop; :meth:`submit` and :meth:`abort` must be
called from that loop. Results are delivered through each request's ``done`` future and, for
streaming requests, its ``chunks`` queue.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import Callable

from ..sglang.rules import SpecConfig

_log = logging.getLogger("tuner.sim")


class DeadlineTimer:
    """Wakes an asyncio event at a wall-clock deadline, to a fraction of a millisecond.

    asyncio's own timers overshoot by 1-3 ms on Linux (the selector rounds its timeout up to whole
    milliseconds, twice), which at a high ``--sim-speedup`` is a visible slice of model time. A
    thread sleeping on a condition variable wakes within ~0.1 ms and hands over with
    ``call_soon_threadsafe``. One daemon thread per engine; :meth:`arm` may be called again at any
    time (the latest deadline wins).
    """

    def __init__(self, clock: Callable[[], float]):
        self.clock = clock
        self._cond = threading.Condition()
        self._deadline: float | None = None
        self._fire: Callable[[], None] | None = None
        self._thread: threading.Thread | None = None

    def arm(self, deadline: float, loop: asyncio.AbstractEventLoop, event: asyncio.Event) -> None:
        with self._cond:
            self._deadline = deadline
            self._fire = lambda: loop.call_soon_threadsafe(event.set)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="sim-deadline", daemon=True)
                self._thread.start()
            self._cond.notify()

    def _run(self) -> None:
        with self._cond:
            while True:
                if self._deadline is None:
                    self._cond.wait()
                    continue
                remaining = self._deadline - self.clock()
                if remaining > 0:
                    self._cond.wait(remaining)
                    continue
                fire, self._deadline, self._fire = self._fire, None, None
                try:
                    fire()
                except RuntimeError:  # the loop closed while the server shut down
                    return


@dataclass(eq=False)
class SimRequest:
    """One generation request as the scheduler sees it. Progress fields are engine-owned."""

    rid: str
    prompt_tokens: int
    max_new_tokens: int
    predictability: float
    stream: bool = False
    log_metrics: bool = True  #: counted in EngineStats (not a health check: SGLang's log_metrics=False)
    # Set by the engine.
    arrival_m: float = 0.0
    abort_m: float | None = None
    generated: int = 0
    verify_ct: int = 0
    correct_drafts: int = 0
    prefilled: bool = False
    finished: bool = False
    emitted: int = 0  #: tokens already delivered to a streaming client
    finish_m: float | None = None
    first_m: float | None = None  #: model time of the prefill that gave the first token
    done: asyncio.Future | None = None
    chunks: asyncio.Queue | None = None


@dataclass(frozen=True)
class Progress:
    """A request's state when a stream chunk was delivered (later steps may be provisional)."""

    generated: int
    verify_ct: int
    correct_drafts: int
    finished: bool
    at_m: float = 0.0  #: model time of the step that produced it


@dataclass
class EngineStats:
    """Counters over finished requests (what SGLang's metrics and internal state report)."""

    requests_finished: int = 0
    generation_tokens: int = 0
    prompt_tokens: int = 0
    spec_verify_calls: int = 0
    spec_tokens: int = 0  #: completion tokens of speculative requests (accept length numerator)
    spec_correct_drafts: int = 0

    @property
    def avg_spec_accept_length(self) -> float | None:
        return self.spec_tokens / self.spec_verify_calls if self.spec_verify_calls else None


@dataclass
class _Snapshot:
    now_m: float
    steps: int
    running: list
    waiting: list
    progress: list
    rng_state: tuple


class BatchEngine:
    """SGLang-style continuous batching over a performance model, in model time.

    ``model`` is a :class:`tuner.sim.model.PerfModel`; ``spec`` the effective speculative setting
    (``None``: autoregressive); ``max_running_requests`` caps the batch (``None``: no cap).
    """

    def __init__(self, model, *, spec: SpecConfig | None, max_running_requests: int | None,
                 speedup: float, seed: int = 0, stream_interval: int = 1,
                 cuda_graph_max_bs: int | None = None, clock: Callable[[], float] = time.monotonic,
                 lookahead_wall_s: float = 0.01):
        self.model, self.spec = model, spec
        self.max_running = max(1, max_running_requests) if max_running_requests else 1 << 30
        self.speedup = float(speedup)
        self.stream_interval = max(1, int(stream_interval))
        self.cuda_graph_max_bs = cuda_graph_max_bs
        self.clock = clock
        self.lookahead_wall_s = lookahead_wall_s
        self.rng = random.Random(seed)
        self.stats = EngineStats()
        self.now_m = 0.0  #: model time of the committed step boundary
        self.steps = 0
        self.running: list[SimRequest] = []
        self.waiting: deque[SimRequest] = deque()
        self._wall0 = clock()
        self._changes: list[float] = []  #: model times of arrivals/aborts not yet seen by run()
        self._wake = asyncio.Event()
        self._timer = DeadlineTimer(clock)
        self.inflight = 0  #: submitted requests not yet finished or aborted

    # ----------------------------------------------------------------------------- clock

    def model_now(self) -> float:
        """The model time that corresponds to the wall clock now."""
        return (self.clock() - self._wall0) * self.speedup

    def wall_at(self, model_s: float) -> float:
        return self._wall0 + model_s / self.speedup

    # ----------------------------------------------------------------------------- API

    @property
    def busy(self) -> bool:
        """Whether any submitted request is still unanswered (queued, running or finishing)."""
        return self.inflight > 0

    def submit(self, req: SimRequest) -> SimRequest:
        """Queue ``req`` at the current model time; its futures are created here."""
        loop = asyncio.get_running_loop()
        req.arrival_m = self.model_now()
        req.done = loop.create_future()
        if req.stream:
            req.chunks = asyncio.Queue()
        self.waiting.append(req)
        self.inflight += 1
        self._changes.append(req.arrival_m)
        self._wake.set()
        return req

    def abort(self, req: SimRequest) -> None:
        """Drop ``req`` at the next step boundary (a client went away)."""
        if req.done.done() or req.abort_m is not None:
            return
        req.abort_m = self.model_now()
        self.inflight -= 1
        self._changes.append(req.abort_m)
        self._wake.set()

    def abort_all(self, reason: BaseException) -> int:
        """Abort every unanswered request (shutdown): each ``done`` future gets ``reason`` and each
        stream a final ``None``, so the handlers waiting on them return at once. Returns how many."""
        pending = [r for r in (*self.running, *self.waiting) if r.done is not None and not r.done.done()]
        for r in pending:
            self.abort(r)
            r.done.set_exception(reason)
            r.done.exception()  # retrieved here: a handler that already left must not warn
            if r.chunks is not None:
                r.chunks.put_nowait(None)
        return len(pending)

    def simulate(self, requests: list[SimRequest]) -> float:
        """Run ``requests`` to completion in model time only, all arriving now (no wall clock, no
        event loop); returns the model seconds from their arrival to the last finish. For checks
        and benchmarks: the HTTP server must measure what this computes."""
        start = self.now_m
        for r in requests:
            r.arrival_m = start
            self.waiting.append(r)
        while self._runnable():
            self._step()
        return max((r.finish_m for r in requests), default=start) - start

    # ----------------------------------------------------------------------------- stepping

    def _snapshot(self) -> _Snapshot:
        reqs = self.running + list(self.waiting)
        return _Snapshot(self.now_m, self.steps, list(self.running), list(self.waiting),
                         [(r, r.generated, r.verify_ct, r.correct_drafts, r.prefilled, r.finished,
                           r.finish_m, r.first_m) for r in reqs], self.rng.getstate())

    def _restore(self, snap: _Snapshot) -> None:
        self.now_m, self.steps = snap.now_m, snap.steps
        self.running = list(snap.running)
        # Requests that arrived after the snapshot stay queued behind the snapshot's waiting ones.
        known = set(snap.waiting) | set(snap.running)
        self.waiting = deque(snap.waiting + [r for r in self.waiting if r not in known])
        for r, gen, ver, cor, pre, fin, fin_m, first_m in snap.progress:
            r.generated, r.verify_ct, r.correct_drafts = gen, ver, cor
            r.prefilled, r.finished, r.finish_m, r.first_m = pre, fin, fin_m, first_m
        self.rng.setstate(snap.rng_state)

    def _drop_aborted(self) -> None:
        t = self.now_m
        if any(r.abort_m is not None and r.abort_m <= t for r in self.running):
            self.running = [r for r in self.running if r.abort_m is None or r.abort_m > t]
        if any(r.abort_m is not None and r.abort_m <= t for r in self.waiting):
            self.waiting = deque(r for r in self.waiting if r.abort_m is None or r.abort_m > t)

    def _admit(self) -> list[SimRequest]:
        room = self.max_running - len(self.running)
        admitted = []
        while room > 0 and self.waiting and self.waiting[0].arrival_m <= self.now_m:
            admitted.append(self.waiting.popleft())
            room -= 1
        return admitted

    def _step(self) -> list[SimRequest]:
        """Run one step from ``now_m`` (a prefill if anyone can be admitted, else a decode).

        Returns the requests with something visible at the step's end (finished, or a stream
        chunk due). Assumes something is runnable.
        """
        self._drop_aborted()
        if not self.running and self.waiting and self.waiting[0].arrival_m > self.now_m:
            self.now_m = self.waiting[0].arrival_m  # idle until the next arrival
        admitted = self._admit()
        visible: list[SimRequest] = []
        if not admitted and not self.running:
            return visible
        noise = self.model.step_noise(self.rng)
        self.steps += 1
        if admitted:
            prompt = sum(r.prompt_tokens for r in admitted)
            self.now_m += self.model.prefill_time_s(prompt, self.spec) * noise
            for r in admitted:
                r.prefilled, r.first_m = True, self.now_m
                r.generated = min(1, r.max_new_tokens)
                self._settle(r, visible)
            self.running += [r for r in admitted if not r.finished]
            return visible
        batch = len(self.running)
        # Each request's cached context (prompt + tokens so far), averaged over the batch.
        context = sum(r.prompt_tokens + r.generated for r in self.running) / batch
        self.now_m += self.model.decode_step_time_s(
            batch, self.spec, self.cuda_graph_max_bs, context_tokens=context) * noise
        for r in self.running:
            if self.spec is None:
                r.generated += 1
            else:
                n = self.model.sample_accept_length(self.spec, r.predictability, self.rng)
                r.verify_ct += 1
                r.correct_drafts += n - 1
                r.generated = min(r.max_new_tokens, r.generated + n)
            self._settle(r, visible)
        if visible:
            self.running = [r for r in self.running if not r.finished]
        return visible

    def _settle(self, r: SimRequest, visible: list) -> None:
        if r.generated >= r.max_new_tokens:
            r.finished, r.finish_m = True, self.now_m
            visible.append(r)
        elif r.stream and (r.emitted == 0 or r.generated - r.emitted >= self.stream_interval):
            visible.append(r)

    def _runnable(self) -> bool:
        return bool(self.running) or bool(self.waiting)

    # ----------------------------------------------------------------------------- loop

    async def run(self) -> None:
        """The scheduler loop; runs until cancelled."""
        while True:
            self._changes.clear()
            if not self._runnable():
                self._wake.clear()
                await self._wake.wait()
                # Idle until the first arrival: the prefill starts when it arrived, not when this
                # loop got the CPU back.
                start = self.waiting[0].arrival_m if self.waiting else self.model_now()
                self.now_m = max(self.now_m, start)
                continue
            snap = self._snapshot()
            # Look ahead to the next visible event, but no further than a short wall horizon: an
            # arrival rolls the look-ahead back, so its cost must stay small when requests arrive
            # one after another (a concurrency sweep being submitted).
            horizon_m = max(self.now_m, self.model_now()) + self.lookahead_wall_s * self.speedup
            visible: list[SimRequest] = []
            step_start = self.now_m
            while not visible and self._runnable() and self.now_m < horizon_m:
                step_start = self.now_m
                visible = self._step()
            if await self._sleep_until(self.now_m, step_start, snap) and visible:
                self._deliver(visible)

    async def _sleep_until(self, event_m: float, step_start_m: float, snap: _Snapshot) -> bool:
        """Sleep to the wall deadline of ``event_m``. Returns False after a rollback (the step that
        produced the event started after an arrival or abort, so the look-ahead was replayed)."""
        deadline = self.wall_at(event_m)
        loop = asyncio.get_running_loop()
        while True:
            if self.clock() >= deadline:
                return True
            self._wake.clear()
            if not self._changes:
                self._timer.arm(deadline, loop, self._wake)
                await self._wake.wait()
            if not self._changes:
                continue  # the timer fired (or a spurious wake-up): check the clock
            changed_m = min(self._changes, default=float("inf"))
            self._changes.clear()
            if changed_m < step_start_m:
                self._restore(snap)
                while self._runnable() and self.now_m < changed_m:
                    self._step()  # replays steps that began before the change: none is visible
                return False

    def _deliver(self, visible: list[SimRequest]) -> None:
        for r in visible:
            if r.chunks is not None and r.generated > r.emitted:
                r.chunks.put_nowait(Progress(r.generated, r.verify_ct, r.correct_drafts, r.finished,
                                             self.now_m))
            r.emitted = r.generated
            if r.finished and r.abort_m is None:
                if _log.isEnabledFor(logging.DEBUG):
                    _log.debug(f"Finished {r.rid}: arrival {r.arrival_m:.4f} s, finish {r.finish_m:.4f} s "
                               f"model time, delivered {self.model_now() - r.finish_m:+.4f} s late "
                               f"(wall clock {self.wall_at(r.arrival_m):.4f} -> {self.clock():.4f})")
                self.inflight -= 1
                self._count_finished(r)
                if not r.done.done():
                    r.done.set_result(r)

    def _count_finished(self, r: SimRequest) -> None:
        if not r.log_metrics:
            return
        s = self.stats
        s.requests_finished += 1
        s.generation_tokens += r.generated
        s.prompt_tokens += r.prompt_tokens
        if r.verify_ct:
            s.spec_verify_calls += r.verify_ct
            s.spec_tokens += r.generated
            s.spec_correct_drafts += r.correct_drafts
