"""When a server counts as hung: the rules, and the watchdog that probes it while the suite runs.

A server that stops answering (a frozen process: SIGSTOP, a machine swapping to death; a scheduler
stuck in a collective) never refuses a connection: the kernel still accepts it, and every request
waits out the suite's ``timeout_s`` (300 s in the article's suite, about 110 requests: four and a half
hours). The suite runner (:mod:`tuner.bench.runner`) declares such a server hung, and ends the run
with :class:`tuner.bench.runner.ServerHungError`, on the first of:

* **silence**: the watchdog's probe, ``GET /v1/models`` on a connection of its own, gets no answer
  ``silent_probes`` times in a row (``probe_timeout_s`` each, one every ``probe_interval_s``). SGLang
  answers ``/v1/models`` in its HTTP process from the tokenizer manager's memory (0.5.23,
  ``entrypoints/http_server.py``, ``available_models``), without the scheduler, so a busy server
  answers it at once; any HTTP status counts as an answer. Its own connection, because a sweep batch
  may hold every pooled one;
* **timeouts in a row**: ``timed_out_steps`` steps in a row (a request, a sweep batch, a cache
  flush) end with a timeout and no request between them succeeds: the HTTP layer answers, but
  nothing is generated (a wedged scheduler);
* **the deadline**: the suite has run longer than the caller's ``deadline_s`` (the study's per-trial
  deadline, :mod:`tuner.engine.deadline`).

The probe timing is wall time on every server: the simulator's ``--sim-speedup`` speeds up its
model clock, not its HTTP layer.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

import aiohttp

from .client import answered

#: The path the watchdog probes: answered by SGLang's HTTP process itself (see above).
PROBE_PATH = "/v1/models"


@dataclass(frozen=True)
class HangPolicy:
    """How quickly a server that stops answering is declared hung (see the module docstring).

    The defaults: a frozen server is found within about 40 s of its silence (a probe every 10 s;
    three unanswered in a row, back to back: 30 s without a word); a busy one is not mistaken for
    it (a loaded 2-core machine answers ``/v1/models`` in milliseconds even at C=256). Two
    timed-out steps in a row: a single slow request is not a hang, but no setting worth keeping
    times out twice running.
    """

    probe_interval_s: float = 10.0
    probe_timeout_s: float = 10.0
    silent_probes: int = 3
    timed_out_steps: int = 2


class Watchdog:
    """Probes ``base_url`` until cancelled; :meth:`run` returns only when the server is silent."""

    def __init__(self, base_url: str, policy: HangPolicy):
        self.url = base_url.rstrip("/") + PROBE_PATH
        self.policy = policy
        self.answered = True  #: whether the latest probe got an answer

    async def run(self) -> str:
        """Probe every ``probe_interval_s``; return why the server counts as hung."""
        p = self.policy
        misses = 0
        async with aiohttp.ClientSession() as session:  # its own connections: never queued behind a batch
            while True:
                if self.answered:  # after a miss, ask again at once: the miss already waited
                    await asyncio.sleep(p.probe_interval_s)
                self.answered = await self._answers(session)
                misses = 0 if self.answered else misses + 1
                if misses >= p.silent_probes:
                    return (f"GET {PROBE_PATH} got no answer {misses} times in a row "
                            f"({p.probe_timeout_s:g} s each): the server stopped answering")

    async def _answers(self, session: aiohttp.ClientSession) -> bool:
        try:
            timeout = aiohttp.ClientTimeout(total=self.policy.probe_timeout_s)
            async with session.get(self.url, timeout=timeout) as resp:
                await answered(resp)  # bounded: a body without end was read until the probe's timeout
            return True
        except asyncio.TimeoutError:
            return False
        except (aiohttp.ClientError, OSError):
            # Refused or reset: the process is gone, which the suite's own requests find out (a
            # dead server, not a hung one); not counted as silence.
            return True
