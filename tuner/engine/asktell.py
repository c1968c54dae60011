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


def parse_utc(text: object) -> datetime | None:
    """A stored time (``created_at`` ...) as an aware datetime, or None when ``text`` is no time.

    This tuner writes :func:`utc_now`'s form, which every Python reads; a study migrated or made by
    another tool may hold other ISO 8601 forms that ``datetime.fromisoformat`` refuses on Python
    3.10 and accepts on 3.11+ (a ``Z``, a fraction of other than 3 or 6 digits as PostgreSQL prints
    it, ``+0000``, PostgreSQL's hour-only ``+01``): pydantic's parser (a dependency already) reads
    them alike on every Python, after the hour-only offset is given its minutes. A time without a
    zone is UTC, as every stored time is (comparing it with a zoned one raised TypeError)."""
    import re

    from pydantic import TypeAdapter, ValidationError

    if not isinstance(text, str) or not text.strip():
        return None
    text = re.sub(r"([+-]\d\d)$", r"\1:00", text.strip())
    try:
        stamp = TypeAdapter(datetime).validate_python(text, strict=False)
    except ValidationError:
        try:
            stamp = datetime.fromisoformat(text)  # 3.11+ reads a few more (the basic form 20261201T100000Z)
        except ValueError:
            return None
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=timezone.utc)
