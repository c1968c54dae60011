"""Noticing that the tuner itself stood still during a measurement.

A tuner process that is paused (SIGSTOP, a suspended VM, a machine swapping hard) keeps the
server's clock running but not its own: its requests then time out, or the trial's deadline passes,
and the server would be blamed (``request_errors``, ``hung``) for the client's pause. A
:class:`StallWatch` ticks in a background thread; a gap between two ticks far longer than the tick
is time this process did not run. A measurement during which that happened is not the server's
figure: the trial raises :class:`TunerStalled` before anything is recorded, and the engine fails
it as ``interrupted`` and queues its setting again (:mod:`tuner.engine.trial`,
:mod:`tuner.engine.baseline`), as for a Ctrl-C.
"""

from __future__ import annotations

import threading
import time
from typing import Callable

from .env_numbers import seconds_from_env

#: A gap this long between two ticks (0.5 s apart) is a stall, not a busy machine: a thread of a
#: loaded 2-core machine is scheduled within milliseconds. ``TUNER_STALL_S`` sets it (tests).
STALLED_S = seconds_from_env("TUNER_STALL_S", 15)
TICK_S = 0.5
#: A shorter gap counts when the answers show it: one read this long after the server's own clock
#: stopped (the threshold of ``tuner.engine.verify``'s rule for such answers, ``OUTSIDE_WALL_S``).
SHOWN_S = 2.0


class TunerStalled(Exception):
    """This process stood still for ``seconds`` during a measurement: its figures are not the
    server's."""

    def __init__(self, seconds: float):
        super().__init__(f"the tuner itself stood still for {seconds:.0f} s during the suite (paused, "
                         "suspended or starved): its figures are not the server's")
        self.seconds = seconds


#: Measurements in a row, with none measured between, during which the tuner stood still: past
#: this, something on the node keeps pausing or starving it, and each retry costs a model load (minutes
#: on a GPU) to be dropped again; the run stops instead of looping to its budget's end or forever
#: (QA, qa223: a lone worker under ``faketime`` measured its baseline again without end).
STALLS_IN_A_ROW = 3


class TunerKeepsStalling(Exception):
    """The tuner stood still during :data:`STALLS_IN_A_ROW` measurements in a row (``what``: the
    baseline's, or the study's trials'): nothing of them was kept, their settings are queued again;
    the run stops with this one line (``tuner.engine.trial``, ``tuner.engine.baseline``)."""

    def __init__(self, what: str, last: TunerStalled):
        super().__init__(
            f"the tuner itself stood still during {STALLS_IN_A_ROW} {what} in a row (the last for "
            f"{last.seconds:.0f} s): something on this node keeps pausing or starving it (a suspended job or "
            "VM, a CPU quota, a machine swapping, a clock that jumps); nothing of them was kept and their "
            "settings are queued again: run again once the tuner runs steadily here")


class StallWatch:
    """A context manager: :attr:`longest_s` is the longest gap between two ticks while it is on, since
    the suite started when its events pass through :meth:`suite_events` (the server's start apart)."""

    def __init__(self, tick_s: float = TICK_S):
        self.tick_s = tick_s
        self.longest_s = 0.0
        self._last = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True, name="stall-watch")

    def _tick(self) -> None:
        while not self._stop.wait(self.tick_s):
            with self._lock:
                now = time.monotonic()
                self.longest_s = max(self.longest_s, now - self._last - self.tick_s)
                self._last = now

    def reset(self) -> None:
        """Forget the gaps so far: only what comes after counts."""
        with self._lock:
            self._last, self.longest_s = time.monotonic(), 0.0

    def suite_events(self, emit: Callable[[str, dict], None] | None) -> Callable[[str, dict], None]:
        """``emit`` (a backend's ``on_event``) that first resets the watch when the suite starts (the
        backend's ``phase: benchmark`` event, :mod:`tuner.engine.backends`): a pause of the tuner while
        its server loads the model distorts no figure -- the server's clock and its load run on -- and
        a stall there failed a clean measurement as ``interrupted`` and launched it again, a second
        model load of minutes on a GPU (QA, qa191: "stood still for 20 s during the suite" of a pause
        before the server was ready)."""
        def on_event(kind: str, data: dict) -> None:
            if kind == "phase" and isinstance(data, dict) and data.get("phase") == "benchmark":
                self.reset()
            if emit is not None:
                emit(kind, data)
        return on_event

    def check(self, answers_waited_s: float = 0.0) -> None:
        """Raise :class:`TunerStalled` when the process stood still for :data:`STALLED_S` or more
        (the gap still open counts: after a pause the caller may run before the ticking thread), or
        for :data:`SHOWN_S` or more when the requests allow a wait as long (``answers_waited_s``: the
        longest a request may have spent outside the server's own clock,
        :func:`tuner.engine.verify.longest_outside_wait_s`): an answer read seconds late because
        this process stood still, counted in the figures or failing the server's measurement as
        its own."""
        longest = max(self.longest_s, time.monotonic() - self._last - self.tick_s)
        if longest >= STALLED_S or SHOWN_S <= longest and SHOWN_S <= answers_waited_s:
            raise TunerStalled(longest)

    def __enter__(self) -> "StallWatch":
        self._last = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
