"""The database's clock, which judges heartbeats, watched for steps (NTP, ``date -s``).

:data:`DATABASE_CLOCK` tells :func:`tuner.engine.workers.reap_dead_trials` whether the clock
Optuna judges heartbeats by ran steadily since this process last looked (:class:`DatabaseClock`);
:func:`beats_ahead` finds the trials whose last beat lies ahead of that clock, which only a clock
stepped back since leaves: their workers have not beaten since.
"""

from __future__ import annotations

import logging
import threading
import time

from .storage import HEARTBEAT_GRACE_S, HEARTBEAT_INTERVAL_S

log = logging.getLogger("tuner.engine")

#: How far the database's clock may move against this process's own between two looks of the
#: reaper before it counts as stepped (seconds): half the margin a live worker's beat has (a beat at
#: most one interval old looks stale only once the clock jumps by more than grace - interval), and
#: well above the time one query takes and what NTP slews in minutes (at most 0.5 ms a second).
CLOCK_STEP_S = max(2.0, (HEARTBEAT_GRACE_S - HEARTBEAT_INTERVAL_S) / 2)


class DatabaseClock:
    """Whether the database's clock ran steadily since this process last looked, per storage.

    Optuna judges a heartbeat by the database's clock alone: ``now()`` written at each beat and
    compared with ``now()`` at the reaper's look (optuna/storages/_rdb/storage.py,
    ``record_heartbeat`` and ``_get_stale_trial_ids``; on SQLite, ``CURRENT_TIMESTAMP``: the wall
    clock of the host that writes). That clock can be stepped: NTP correcting a database server
    whose clock drifted or booted wrong, an operator's ``date -s``. Stepped forward by an hour, every
    live worker's last beat read an hour old until its next beat, and a reaper that looked in those
    seconds failed another host's live trial as dead (QA, qa168: PostgreSQL under libfaketime
    stepped +3600 s while a worker of another host beat every 2 s: its live trial was FAIL).

    Each look reads the database's ``now()`` beside this process's monotonic clock; when the
    difference between the two moved by more than :data:`CLOCK_STEP_S` since the previous look, the
    database's clock was stepped, and no trial is judged by its heartbeat until every live worker
    has beaten on the new clock (a grace period and an interval: as after a storage outage). A
    process's first look has nothing to compare with and judges as before."""

    def __init__(self):
        self._offset: dict = {}  #: per database: its seconds minus this process's monotonic seconds
        self._quiet_until: dict = {}
        self._first_look: dict = {}  #: per database: when (monotonic) this process first read its clock
        self._lock = threading.Lock()

    def steady(self, storage) -> bool:
        """Read the database's clock now; False while a step of it seen at this or an earlier look
        may still make a live worker's heartbeat look old."""
        from .asktell import _patiently

        backend = getattr(storage, "_backend", storage)
        if not hasattr(backend, "scoped_session"):
            return True  # not a database (an in-memory storage): no clock of its own
        offset = _patiently(backend, "database_clock", database_seconds) - time.monotonic()
        key = _key(backend)
        with self._lock:
            self._first_look.setdefault(key, time.monotonic())
            before, self._offset[key] = self._offset.get(key), offset
            if before is not None and abs(offset - before) > CLOCK_STEP_S:
                log.warning("the database's clock was stepped by %+.0f s since the last look: no trial is "
                            "judged dead by its heartbeat for the next %g s", offset - before,
                            HEARTBEAT_GRACE_S + HEARTBEAT_INTERVAL_S)
                self._quiet_until[key] = time.monotonic() + HEARTBEAT_GRACE_S + HEARTBEAT_INTERVAL_S
            return time.monotonic() >= self._quiet_until.get(key, 0.0)

    def settled(self, storage) -> bool:
        """Whether this process has watched the database's clock for a grace period and an interval
        since its first look, and is past the quiet after any step it saw: a step since it began
        watching was seen, and every live worker has beaten since any step before that, so a beat
        still ahead of the clock is a dead worker's (:func:`beats_ahead`)."""
        key = _key(getattr(storage, "_backend", storage))
        settle = HEARTBEAT_GRACE_S + HEARTBEAT_INTERVAL_S
        with self._lock:
            first = self._first_look.get(key)
            now = time.monotonic()
            return first is not None and now - first >= settle and now >= self._quiet_until.get(key, 0.0)


def _key(backend):
    """The database whose clock ``backend`` reads, whichever storage object of this process reads it."""
    return str(getattr(backend, "url", "")) or id(backend)


def database_seconds(backend) -> float:
    """The database's clock as Optuna's heartbeats read it, in seconds since the epoch: ``now()``,
    UTC in the tuner's PostgreSQL sessions; on SQLite the same clock as ``CURRENT_TIMESTAMP``, to the
    millisecond (``CURRENT_TIMESTAMP`` has whole seconds: a second of rounding is no step)."""
    from datetime import timezone

    import sqlalchemy as sa
    from optuna.storages._rdb.storage import _create_scoped_session

    with _create_scoped_session(backend.scoped_session) as session:
        if session.get_bind().dialect.name == "sqlite":
            days = float(session.execute(sa.select(sa.func.julianday("now"))).scalar_one())
            return (days - 2440587.5) * 86400  # Julian days to seconds since 1970-01-01 UTC
        now = session.execute(sa.select(sa.func.now())).scalar_one()
    return (now if now.tzinfo is not None else now.replace(tzinfo=timezone.utc)).timestamp()


DATABASE_CLOCK = DatabaseClock()


def beats_ahead(storage, study_id: int, grace_s: float) -> list[int]:
    """The RUNNING trials of study ``study_id`` whose last heartbeat lies more than ``grace_s`` ahead
    of the database's clock: stale, as one ``grace_s`` behind it is.

    Each beat is the database's ``now()`` when it was written, so a beat ahead of ``now()`` was
    written before the clock was stepped back, and its worker has not beaten since. Optuna takes it
    for a fresh one (``_get_stale_trial_ids`` compares ``now() - beat`` with the grace only): with
    the server's clock stepped back an hour, a worker killed meanwhile kept its trial RUNNING, its
    setting not queued again, for an hour more (QA, qa168: PostgreSQL under libfaketime stepped
    -3600 s, grace 8 s: still RUNNING 60 s later). A live worker's beat lies ahead only until its
    next one (an interval): the caller asks only once :meth:`DatabaseClock.settled` (a step this
    process saw, or one before it began to watch, is then more than an interval past)."""
    from .asktell import _patiently

    backend = getattr(storage, "_backend", storage)
    if not hasattr(backend, "scoped_session"):
        return []
    return _patiently(backend, "beats_ahead", _beats_ahead, study_id, grace_s)


def _beats_ahead(backend, study_id: int, grace_s: float) -> list[int]:
    import sqlalchemy as sa
    from optuna.storages._rdb import models
    from optuna.storages._rdb.storage import _create_scoped_session
    from optuna.trial import TrialState

    trial, beat = models.TrialModel, models.TrialHeartbeatModel
    with _create_scoped_session(backend.scoped_session) as session:
        # as Optuna reads it: the session's wall time without its zone (UTC in the tuner's sessions)
        now = session.execute(sa.select(sa.func.now())).scalar_one().replace(tzinfo=None)
        rows = session.execute(sa.select(trial.trial_id, beat.heartbeat)
                               .join(beat, beat.trial_id == trial.trial_id)
                               .where(trial.study_id == study_id, trial.state == TrialState.RUNNING)).all()
    return [trial_id for trial_id, at in rows if (at - now).total_seconds() > grace_s]
