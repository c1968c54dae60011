"""Test-only: kill this worker with SIGKILL at a named point of the trial lifecycle.

``TUNER_TEST_KILL_AT=POINT`` (or ``POINT@N``: the N-th time this process reaches it) makes the
worker ``kill -9`` itself there, so a test can check that a rerun recovers exactly from a crash at
every point (tests/engine/test_kill_points.py, benchmarks/fault_campaign.py). Unset, a kill point
costs one dictionary lookup. Never set it in production: the worker dies without stopping its server
(the next run on that host stops it, as after any crash).

The points are :data:`TRIAL_POINTS`, in the order a trial passes them; the baseline passes the
ones from ``launched`` on under the same names prefixed ``baseline.`` (:data:`BASELINE_POINTS`).
"""

from __future__ import annotations

import os
import signal

ENV = "TUNER_TEST_KILL_AT"

#: Every point of a trial's life, in order (see :mod:`tuner.engine.trial` and :mod:`tuner.engine.finish`).
TRIAL_POINTS = (
    "asked",       # the trial exists, RUNNING, with its first heartbeat
    "claimed",     # its effective setting is claimed
    "launching",   # marked as launching (counted against the budget by other workers)
    "launched",    # the server process started (ServerBackend only)
    "measured",    # the suite finished; nothing written yet
    "journaled",   # the measurement is in the local journal; nothing in storage
    "figures",     # figures and status stored as attributes; not told
    "files",       # suite JSON and artifacts written; not told
    "told",        # told; the journal entry not yet removed
)
#: The baseline's points (its launch, its measurement and what follows).
BASELINE_POINTS = tuple(f"baseline.{p}" for p in TRIAL_POINTS[TRIAL_POINTS.index("launched"):])

_reached: dict[str, int] = {}


def kill_point(name: str) -> None:
    """SIGKILL this process if ``$TUNER_TEST_KILL_AT`` names this point (and count)."""
    wanted = os.environ.get(ENV)
    if not wanted:
        return
    point, _, nth = wanted.partition("@")
    if point != name:
        return
    _reached[name] = _reached.get(name, 0) + 1
    if _reached[name] == (int(nth) if nth else 1):
        os.kill(os.getpid(), signal.SIGKILL)
