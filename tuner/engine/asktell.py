"""Optuna's ask and tell as the engine calls them, and the few conversions every step needs.

The engine drives Optuna by ask/tell and records heartbeats itself (:class:`tuner.engine.workers.Heartbeat`);
Optuna warns that storage heartbeats are meant for ``Study.optimize``, which is exactly what this
module acknowledges, once, instead of every caller.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from datetime import datetime, timezone


@contextmanager
def _heartbeat_by_hand():
    # Optuna warns that storage heartbeats are meant for Study.optimize; with ask/tell the tuner
    # records them itself (Heartbeat), which is what the warning asks for.
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used")
        yield


def ask(study, distributions=None):
    """``study.ask``: a new RUNNING trial (a queued one first)."""
    with _heartbeat_by_hand():
        return study.ask(distributions)


def tell(study, trial, values=None, state=None):
    """``study.tell``: finish ``trial`` with ``values`` (or ``state``)."""
    with _heartbeat_by_hand():
        return study.tell(trial, values, state=state)


def utc_now() -> str:
    """The current time as stored in attributes: UTC, ISO 8601, whole seconds."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")
