"""Deleting and copying whole studies: a study and its baseline companion always go together.

Contracts:

* :func:`delete_study` removes the study and ``NAME.baseline`` from the storage, nothing else (the
  server logs and artifacts under the workdir are files on the machines that ran the trials). A
  study with RUNNING trials (its baseline's included) is refused unless ``force``: a live worker
  would lose its trial (a worker whose study is deleted under it stops with one line, its
  journaled measurement set aside: :func:`tuner.engine.finish.replay_journal`).
* :func:`copy_study` copies the study (user and system attributes, every trial with its number,
  values, constraints, attributes and artifact references) and its baseline study, into the same
  or another storage, under a new name or the same one. A RUNNING trial is copied as failed (its
  worker writes to the source only) and its setting queued again in the copy. The
  copy's stored config carries its new name, and it becomes ready (:data:`READY_ATTR`) last, so a
  worker never runs a half-copied study. A destination that exists is a :class:`ConfigError`.
  A copy cut short is removed as far as the storage lets it; what may remain is named in the error
  (:class:`CopyInterrupted` for Ctrl-C), with the command that clears it.
"""

from __future__ import annotations

import uuid
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from ..config.study import COMPANIONS, NAME_PATTERN, companion_of, study_name_problem
from ..config.yamlfile import ConfigError
from .records import INTERRUPTED
from .storage import open_storage, redact
from .study import (BASELINE_SUFFIX, CONFIG_ATTR, READY_ATTR, UID_ATTR, incomplete_note, open_study,
                    study_exists, wait_until_ready)
from .urls import describe_error


@contextmanager
def _writing(url: str, name: str):
    """Storage writes that fail (a read-only file or database, a full disk) as one
    :class:`ConfigError` naming the storage and the driver's reason, password scrubbed."""
    from optuna.exceptions import StorageInternalError
    from sqlalchemy.exc import SQLAlchemyError

    try:
        yield
    except (StorageInternalError, SQLAlchemyError) as exc:
        raise ConfigError(redact(url) or "", name, f"cannot write: {describe_error(exc, url)}") from None


def _running(study) -> list[int]:
    from optuna.trial import TrialState

    return [t.number for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))]


def delete_study(name: str, storage_url: str, force: bool = False) -> list[str]:
    """Delete study ``name`` and its companions (baseline, confirmation); returns the names
    deleted. A companion alone is refused while its study exists (an orphan, whose study was
    deleted before companions went with it, may be deleted by its own name)."""
    import optuna

    companion = companion_of(name)
    study = open_study(name, storage_url, companions=True)  # ConfigError naming the studies there when unknown
    storage = study._storage
    if companion is not None and study_exists(companion[0], storage):
        raise ConfigError(redact(storage_url) or "", name, f"is the {companion[1]} of study {companion[0]}, "
                          "deleted with it: delete that study instead")
    parts = [] if companion is not None else [name + suffix for suffix in COMPANIONS]
    running = [str(n) for n in _running(study)]
    for part in parts:
        try:
            running += [COMPANIONS[part[len(name):]]] * bool(_running(optuna.load_study(study_name=part,
                                                                                        storage=storage)))
        except KeyError:
            pass  # no such companion (yet): nothing of it runs
    if running and not force:
        raise ConfigError(redact(storage_url) or "", name, f"trials [{', '.join(running)}] are running: stop "
                          "the workers first (a dead worker's trials: --force deletes anyway)")
    deleted = []
    with _writing(storage_url, name):
        for n in (*parts, name):  # the study last: a half-deleted one still shows up
            if study_exists(n, storage):
                optuna.delete_study(study_name=n, storage=storage)
                deleted.append(n)
    return deleted


class CopyInterrupted(KeyboardInterrupt):
    """Ctrl-C cut a copy short and its part copy could not be removed (the storage away): the message
    names it and the command that clears it, as a storage error's does (:func:`copy_study`)."""


def _may_remain(new_name: str) -> str:
    return (f"the part copied as {new_name} may remain (incomplete): tuner study delete {new_name}, once the "
            "storage answers")


@dataclass
class CopyResult:
    source: str
    destination: str
    trials: int  #: trials copied into the study (the baseline study's not counted)
    running: list[int]  #: trials RUNNING in the source: failed in the copy, their settings queued again
    #: of ``running``, those the source's worker had not yet given a setting (asked, the sampler's
    #: params not stored yet): nothing to queue
    unqueued: list[int] = field(default_factory=list)


def copy_study(name: str, storage_url: str, new_name: str, to_url: str | None = None) -> CopyResult:
    """Copy study ``name`` (and its baseline) to ``new_name`` in ``to_url`` (default: the same
    storage). See the module docstring for what is copied."""
    source = open_study(name, storage_url, tuner_only=True)  # plain Optuna's: refused at once, not waited for
    wait_until_ready(source)
    _check_name(new_name)
    target = open_storage(to_url or storage_url)
    if new_name == name and (to_url is None or to_url == storage_url):
        raise ConfigError("copy", new_name, "is the study itself; give another name or --to-storage URL")
    import optuna

    for n in (new_name, new_name + BASELINE_SUFFIX):
        if study_exists(n, target):
            cut = n == new_name and incomplete_note(optuna.load_study(study_name=n, storage=target))
            raise ConfigError(redact(to_url or storage_url) or "", n, "exists already" + (
                " (incomplete: a creation or copy cut short)" if cut else "") + "; delete it first "
                f"(tuner study delete {new_name}) or choose another name")

    bsource = None
    try:
        bsource = optuna.load_study(study_name=name + BASELINE_SUFFIX, storage=source._storage)
    except KeyError:
        pass
    try:
        with _writing(to_url or storage_url, new_name):
            copied, skipped, unqueued = _copy_one(source, target, new_name, rename=True)
            if bsource is not None:
                _copy_one(bsource, target, new_name + BASELINE_SUFFIX, rename=False)
            # Ready last: workers wait for this attribute before they trust the study.
            dest = optuna.load_study(study_name=new_name, storage=target)
            dest.set_user_attr(READY_ATTR, source.user_attrs[READY_ATTR])
    except BaseException as exc:
        # All or nothing (Ctrl-C, a storage error): a part-copy would read as a study with trials
        # missing. Removed as far as the storage lets us; the error goes on either way, naming what
        # could not be removed (the storage gone too: QA found it after the restart, unnamed).
        interrupted = isinstance(exc, KeyboardInterrupt)
        try:
            left = _remove_part_copy(new_name, target)
        except KeyboardInterrupt:  # Ctrl-C in the removal's pauses, the storage away: nothing more is tried
            left, interrupted = [new_name], True
        if left and interrupted:
            # QA (qa222): Ctrl-C with PostgreSQL stopped said only "interrupted", and the part stayed
            raise CopyInterrupted(_may_remain(new_name)) from None
        if left and isinstance(exc, ConfigError):
            raise ConfigError(exc.source, exc.key, f"{exc.message}; {_may_remain(new_name)}") from None
        raise
    return CopyResult(name, new_name, copied, skipped, unqueued)


#: How often the removal of a part-copy tries each study, and the pause before the next try (seconds,
#: doubled each time): a session the server ended (``pg_terminate_backend``, a restart) is back at
#: the next connection, while a storage that stays down is named within a few seconds.
REMOVE_ATTEMPTS, REMOVE_PAUSE_S = 5, 0.25


def _remove_part_copy(new_name: str, target) -> list[str]:
    """Delete what a cut-short copy wrote under ``new_name`` (its baseline first, the study last, as
    :func:`delete_study` does); returns the names that may remain. An outage (:func:`tuner.engine.
    patience.is_transient`) is tried again, :data:`REMOVE_ATTEMPTS` times: the PostgreSQL session
    killed under the copy was often killed under its first delete too, and the part-copy stayed
    (QA, qa205: copies under a ``pg_terminate_backend`` loop left one about once in 13 runs). A study
    that cannot be deleted stops the removal: the study stays with whatever is left of its
    baseline, so ``tuner study delete NEW`` clears both (deleted first, the study could go and its
    baseline stay, and that command then said ``NEW: no such study``)."""
    import time

    import optuna

    from .patience import is_transient

    for n in (new_name + BASELINE_SUFFIX, new_name):
        for attempt in range(REMOVE_ATTEMPTS):
            try:
                optuna.delete_study(study_name=n, storage=target)
                break
            except KeyError:
                break  # not created yet
            except Exception as exc:  # noqa: BLE001 - the storage is gone too: named by the caller
                if attempt + 1 == REMOVE_ATTEMPTS or not is_transient(exc):
                    return [new_name]
                time.sleep(REMOVE_PAUSE_S * 2 ** attempt)
    return []


def _check_name(name: str) -> None:
    import re

    if not re.fullmatch(NAME_PATTERN, name):
        raise ConfigError("copy", name, "a study name is letters, digits and ._-")
    problem = study_name_problem(name)
    if problem:
        raise ConfigError("copy", name, problem)


def _copy_one(source, target_storage, new_name: str, rename: bool) -> tuple[int, list[int], list[int]]:
    """Copy one Optuna study (attributes, non-running trials); the ready marker is left out."""
    import optuna
    from optuna.trial import TrialState

    dest = optuna.create_study(study_name=new_name, storage=target_storage, directions=source.directions)
    for key, value in source._storage.get_study_system_attrs(source._study_id).items():
        dest._storage.set_study_system_attr(dest._study_id, key, value)
    for key, value in source.user_attrs.items():
        if key == READY_ATTR:
            continue
        if key == CONFIG_ATTR and rename:
            value = {**value, "name": new_name}
        if key == UID_ATTR and rename:
            value = uuid.uuid4().hex  # its own study: a journal entry of the source is not its own
        dest.set_user_attr(key, value)
    copied, running = 0, []
    for trial in source.get_trials(deepcopy=True):
        if trial.state == TrialState.RUNNING:
            running.append(trial.number)
            trial.state, trial.values = TrialState.FAIL, None
            trial.datetime_complete = datetime.now()
            trial.set_user_attr("status", INTERRUPTED)
            # a trial copied between its ask and its params has no setting to queue (QA: copy during
            # a run said "their settings queued again" of such a trial, and nothing was queued)
            trial.set_user_attr("note", f"running in {source.study_name} when it was copied; " + (
                "queued again here" if trial.params else "it had no setting yet: nothing to queue"))
        dest._storage.create_new_trial(dest._study_id, template_trial=trial)
        copied += 1
    unqueued = []
    for number in running:  # after every copied trial, so the numbers match the source's
        params = dest.trials[number].params
        if params:
            dest.enqueue_trial(params, user_attrs={"retry_of": number})
        else:
            unqueued.append(number)
    return copied, running, unqueued
