"""A call that may wait with no end (a lock, a frozen server), run so a test fails instead of hanging."""

from __future__ import annotations

import threading

#: How long a call may take before a test calls it hung: far past the patience the tests set
#: (2-3 s), on a loaded machine.
HUNG_S = 90


def in_thread(fn, bound_s: float = HUNG_S) -> dict:
    """``fn()`` in a daemon thread, joined for ``bound_s``: ``{"value": ...}`` or ``{"error": exc}``,
    or ``{}`` when it is still waiting (the thread is left to end when what holds it is released)."""
    out: dict = {}

    def run():
        try:
            out["value"] = fn()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            out["error"] = exc

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(bound_s)
    return out
