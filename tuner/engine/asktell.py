"""Optuna's ask and tell as the engine calls them, and the few conversions every step needs.

The engine drives Optuna by ask/tell and records heartbeats itself (:class:`tuner.engine.workers.Heartbeat`);
Optuna warns that storage heartbeats are meant for ``Study.optimize``, which is exactly what this
module acknowledges, once, instead of every caller.

A queued (WAITING) trial is started by one worker only (:func:`ask`): of two workers asking at the
same moment, one gets it and the other the next queued one, or a new trial.
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
    """``study.ask``: a new RUNNING trial (a queued one first), a queued one started by this
    worker alone (:func:`take_queued`)."""
    with _heartbeat_by_hand(), _queue_taken_once(study):
        return study.ask(distributions)


def propose(trial, distributions=None) -> None:
    """What Optuna's ``study.ask(distributions)`` does after it has the trial: each distribution
    suggested, so the sampler proposes the parameters now (optuna/study/study.py, ``Study.ask``).
    Apart from :func:`ask` so a worker names itself on the trial before the proposal
    (:func:`tuner.engine.workers.start_trial`)."""
    from optuna.distributions import _convert_old_distribution_to_new_distribution

    for name, dist in (distributions or {}).items():
        trial._suggest(name, _convert_old_distribution_to_new_distribution(dist))


@contextmanager
def _queue_taken_once(study):
    # Optuna's ask starts a queued trial through Study._pop_waiting_trial_id (optuna/study/study.py):
    # the queue read, then set_trial_state_values(RUNNING), which reads the trial FOR UPDATE and
    # refuses one no longer WAITING. SQLite has no FOR UPDATE, and Python's sqlite3 driver begins the
    # transaction at the UPDATE only: two workers that both read the trial WAITING both started it,
    # and both launched its setting (QA: two workers, one seed measured twice). The pop is this
    # study's own for the ask (an attribute of the instance, gone after it); ask is otherwise Optuna's.
    from optuna.storages import RDBStorage
    from optuna.trial import TrialState

    if not isinstance(getattr(study._storage, "_backend", study._storage), RDBStorage):
        yield  # in memory (benchmarks): one process, the storage's lock makes Optuna's pop atomic
        return
    study._pop_waiting_trial_id = lambda: next((t._trial_id for t in study.get_trials(
        deepcopy=False, states=(TrialState.WAITING,)) if take_queued(study, t._trial_id)), None)
    try:
        yield
    finally:
        del study._pop_waiting_trial_id


def take_queued(study, trial_id: int) -> bool:
    """Start the queued trial ``trial_id`` (WAITING to RUNNING, its start time set) when it is still
    WAITING; False when another worker started it first (or it finished): :func:`move_state`, so of
    two workers exactly one gets True on every database."""
    from optuna.trial import TrialState

    return move_state(study._storage, trial_id, TrialState.WAITING, TrialState.RUNNING, "datetime_start")


def move_state(storage, trial_id: int, was, to, stamp: str) -> bool:
    """Move the trial ``trial_id`` from the state ``was`` to ``to`` and set its time ``stamp``
    (``datetime_start`` or ``datetime_complete``) to now, when it is still ``was``; False when
    another worker moved it first. One conditional UPDATE (``WHERE state = was``), so of two workers
    exactly one gets True on every database, where Optuna's ``set_trial_state_values`` reads the
    trial ``FOR UPDATE`` and then writes it: SQLite has no ``FOR UPDATE``. ``storage`` is an RDB
    storage (or Optuna's cache of one).

    A storage that rides out outages (:class:`tuner.engine.patience.PatientRDBStorage`) retries it
    as any call of its own; a retry after an attempt whose commit landed (the connection broke
    before its answer) finds the trial in ``to`` with this move's own time, and it is this worker's
    (a queued trial is not left RUNNING with nobody running it, a dead trial's setting not left
    unqueued).

    The time is written as the column holds it: naive UTC. Optuna's model converts a trial's times
    to and from the reader's local time (``TrialModel.datetime_start``, optuna/storages/_rdb/models.py,
    5.0 and 5.1), but this UPDATE writes the column itself: the local time written here (QA, qa95:
    a worker with ``TZ=Europe/Berlin``) was read back an hour late, so a queued trial began an hour
    after it ended (a duration of -3600 s in Optuna's and the dashboard's views), a reaped one ended
    an hour late, and a retry after a commit that landed did not know its own time: the queued
    trial was left RUNNING with nobody on it, a dead trial's setting unqueued."""
    at = datetime.now(timezone.utc).replace(tzinfo=None)
    return _patiently(storage, "move_state", _move_state, trial_id, was, to, stamp, at)


def _move_state(backend, trial_id: int, was, to, stamp: str, at: datetime) -> bool:
    import sqlalchemy as sa
    from optuna.storages._rdb import models
    from optuna.storages._rdb.storage import _create_scoped_session

    trial = models.TrialModel
    column = trial.__table__.c[stamp]  # the stored naive UTC, not the model's local-time view of it
    with _create_scoped_session(backend.scoped_session) as session:
        if session.execute(
                sa.update(trial).where(trial.trial_id == trial_id, trial.state == was)
                # keyed by the Column: SQLAlchemy 2.0 (Python 3.10's) resolves a keyword to the model's
                # attribute, and Optuna's datetime_start is a property there ('property' object has no
                # attribute '_bulk_update_tuples': every run on 3.10 ended at its first queued trial)
                .values({trial.__table__.c.state: to, column: at})
                .execution_options(synchronize_session=False)).rowcount == 1:
            return True
        held = session.execute(sa.select(trial.state, column).where(trial.trial_id == trial_id)).first()
        return held is not None and held[0] == to and held[1] == at


def study_attr_text(storage, study_id: int, key: str) -> str | None:
    """The study user attribute ``key`` as the database holds it (its JSON text; None when unset),
    read from the database itself: the ``was`` of :func:`replace_study_attr`."""
    return _patiently(storage, "study_attr_text", _study_attr_text, study_id, key)


def _study_attr_text(backend, study_id: int, key: str) -> str | None:
    import sqlalchemy as sa
    from optuna.storages._rdb import models
    from optuna.storages._rdb.storage import _create_scoped_session

    attr = models.StudyUserAttributeModel
    with _create_scoped_session(backend.scoped_session) as session:
        return session.execute(sa.select(attr.value_json).where(
            attr.study_id == study_id, attr.key == key)).scalar_one_or_none()


def _patiently(storage, name: str, call, *args):
    """``call(backend, *args)`` on ``storage``'s RDB backend, retried through outages as the
    storage's own calls are when it is patient (:mod:`tuner.engine.patience`)."""
    from .patience import patient_backend

    backend = getattr(storage, "_backend", storage)
    patient = patient_backend(backend)
    if patient is not None:
        return patient._patiently(name, call, args, {})
    return call(backend, *args)


def replace_study_attr(storage, study_id: int, key: str, was: str, value) -> bool:
    """Set the study user attribute ``key`` to ``value`` when it still holds the JSON text ``was``
    (:func:`study_attr_text`); False when another process changed it since: the caller reads it
    again and recomputes. One conditional UPDATE, as :func:`move_state`, where Optuna's
    ``set_study_user_attr`` writes whatever it was (a read-modify-write of two processes loses
    one). A patient storage's retry, after an attempt whose commit landed before the connection
    broke, finds ``value`` there and takes it as this call's; only a retry does (on a first attempt
    that text is another writer's who made the same change: this one must be made again). A retry
    whose first attempt did not land, while another writer made the very same change, is taken for
    this call's too: the one case left where an extension is lost (two at once, and an outage)."""
    import json

    text = json.dumps(value)  # Optuna's form of an attribute (optuna/storages/_rdb/storage.py)
    return _patiently(storage, "replace_study_attr", _replace_study_attr, study_id, key, was, text, [])


def _replace_study_attr(backend, study_id: int, key: str, was: str, text: str, tries: list[int]) -> bool:
    import sqlalchemy as sa
    from optuna.storages._rdb import models
    from optuna.storages._rdb.storage import _create_scoped_session

    tries.append(1)
    attr = models.StudyUserAttributeModel
    mine = (attr.study_id == study_id, attr.key == key)
    with _create_scoped_session(backend.scoped_session, True) as session:
        if session.execute(sa.update(attr).where(*mine, attr.value_json == was).values(value_json=text)
                           .execution_options(synchronize_session=False)).rowcount == 1:
            return True
        held = session.execute(sa.select(attr.value_json).where(*mine)).scalar_one_or_none()
        return len(tries) > 1 and held == text


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
