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

from .storage import seconds_from_env

#: A gap this long between two ticks (0.5 s apart) is a stall, not a busy machine: a thread of a
#: loaded 2-core machine is scheduled within milliseconds. ``TUNER_STALL_S`` sets it (tests).
STALLED_S = seconds_from_env("TUNER_STALL_S", 15)
TICK_S = 0.5


class TunerStalled(Exception):
    """This process stood still for ``seconds`` during a measurement: its figures are not the
    server's."""

    def __init__(self, seconds: float):
        super().__init__(f"the tuner itself stood still for {seconds:.0f} s during the suite (paused, "
                         "suspended or starved): its figures are not the server's")
        self.seconds = seconds


class StallWatch:
    """A context manager: :attr:`longest_s` is the longest gap between two ticks while it is on."""

    def __init__(self, tick_s: float = TICK_S):
        self.tick_s = tick_s
        self.longest_s = 0.0
        self._last = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True, name="stall-watch")

    def _tick(self) -> None:
        while not self._stop.wait(self.tick_s):
            now = time.monotonic()
            self.longest_s = max(self.longest_s, now - self._last - self.tick_s)
            self._last = now

    def check(self) -> None:
        """Raise :class:`TunerStalled` when the process stood still for :data:`STALLED_S` or more
        (the gap still open counts: after a pause the caller may run before the ticking thread)."""
        longest = max(self.longest_s, time.monotonic() - self._last - self.tick_s)
        if longest >= STALLED_S:
            raise TunerStalled(longest)

    def __enter__(self) -> "StallWatch":
        self._last = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
