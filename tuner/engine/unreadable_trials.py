"""Finished trials whose stored values Optuna cannot read, failed before a worker samples.

SQLite keeps a NaN as NULL, and Optuna's reader asserts on a NULL objective value
(``optuna/storages/_rdb/models.py``, ``TrialValueModel.stored_repr_to_value``; see
:mod:`tuner.engine.stored_trials`). The readers show such a trial as unreadable, but a worker
cannot go round it: every sampler, ``study.ask`` and the budget read the whole study through that
reader, so `tuner study run` ended in an ``AssertionError`` on the first one (QA). A value that is
not a number is no result ("nothing wrong is kept"), so :func:`fail_unreadable_trials` fails each
such trial before the worker samples: its state becomes FAIL and its value rows go, and what they
held is kept in its user attributes (``unreadable_values``: objective index to value, ``None``
where NULL), beside its figures, which were never touched ("nothing measured is lost"). The
setting may then be proposed and measured again, as after any failed trial.

PostgreSQL keeps a NaN as NaN, and any storage keeps +-inf (Optuna's ``tell`` stores one): Optuna
reads such a trial back, but the readers show it as unreadable (:func:`tuner.engine.records.values_problem`:
not a finite number, or negative), and the structured sampler took an ``inf`` for a reading: its
log-scale model went NaN and `tuner study run` ended in scikit-learn's ``ValueError: Input y
contains NaN`` (QA, qa125), while a NaN on PostgreSQL stayed a COMPLETE trial the run kept counting,
where SQLite's run failed it. Such a trial is failed the same way, its note naming the value
(:func:`fail_unreadable_trials`); in ``unreadable_values`` a value that is not a finite number is
kept as its text (``"nan"``, ``"inf"``, ``"-inf"``), so the attribute stays plain JSON.

Optuna writes no finished trial (``UpdateFinishedTrialError``), so this is SQL on its tables, in
one transaction per trial. The state moves only from COMPLETE (``WHERE state = 'COMPLETE'``), and
the values and attributes are written only by the transaction that moved it: a retry after a commit
that landed, or a second worker doing the same at once, changes nothing. Raises what the database
raises; a patient storage retries it through outages like its own calls.
"""

from __future__ import annotations

import json
import math

from .records import values_problem
from .stored_trials import UNBUILT_PROBLEM, UnbuiltTrial, stored_trials

#: the user attribute that keeps a failed trial's unreadable values
VALUES_ATTR = "unreadable_values"
#: its ``failure_class``
FAILURE_CLASS = "unreadable"
_KEPT = (f"failed, its stored values kept in its user attribute {VALUES_ATTR}; the setting may be "
         "measured again")
#: the warning a worker gives for each trial it failed here whose values Optuna cannot read
FAILED_NOTE = f"its stored objective value is not a number, which Optuna cannot read back: {_KEPT}"


def fail_unreadable_trials(study) -> list[tuple[int, str]]:
    """Fail every COMPLETE trial of ``study`` (an Optuna ``Study`` on an RDB storage) whose stored
    values Optuna cannot read, or reads as something no objective can be (not a finite number, or
    negative: :func:`~tuner.engine.records.values_problem`); for each this call failed, in order,
    its number and the warning to give (:data:`FAILED_NOTE`, or one naming the value)."""
    from optuna.trial import TrialState

    from .asktell import _patiently

    names = list(study.metric_names or [])
    bad = []
    for t in stored_trials(study):
        if isinstance(t, UnbuiltTrial):
            bad.append((t.number, UNBUILT_PROBLEM, FAILED_NOTE))
        elif t.state == TrialState.COMPLETE and (problem := values_problem(t.values, names)) is not None:
            bad.append((t.number, problem, f"stored objective {problem}: {_KEPT}"))
    failed = [(n, note) for n, problem, note in bad
              if _patiently(study._storage, "fail_unreadable", _fail, study._study_id, n, problem)]
    if bad:  # failed here or by another worker at once (its _fail found it FAIL): read it afresh
        _forget_cached_trials(study._storage, study._study_id)
    return failed


def _forget_cached_trials(storage, study_id: int) -> None:
    """Drop the finished trials Optuna's cache in front of the RDB storage holds for the study
    (``optuna/storages/_cached_storage.py``, ``_StudyInfo``: a finished trial is read once and
    never again), so the next read sees the trials failed here or by another worker meanwhile: the
    sampler was handed the cached COMPLETE trial with its ``inf``."""
    studies, lock = getattr(storage, "_studies", None), getattr(storage, "_lock", None)
    if not isinstance(studies, dict) or lock is None:
        return
    with lock:
        info = studies.get(study_id)
        if info is not None:
            info.trials.clear()
            info.unfinished_trial_ids.clear()
            info.last_finished_trial_id = -1


def _held(value, value_type) -> float | str | None:
    """A stored objective value as ``unreadable_values`` keeps it: a finite number as it is, NULL as
    None, NaN and +-inf as text (Optuna writes +-inf as a NULL value of type ``INF_POS``/``INF_NEG``)."""
    kind = getattr(value_type, "name", value_type)
    if kind in ("INF_POS", "INF_NEG"):
        return "inf" if kind == "INF_POS" else "-inf"
    if value is None or math.isfinite(value):
        return value
    return str(value)


def _fail(backend, study_id: int, number: int, problem: str = UNBUILT_PROBLEM) -> bool:
    import sqlalchemy as sa
    from optuna.storages._rdb import models
    from optuna.storages._rdb.storage import _create_scoped_session
    from optuna.trial import TrialState

    trial, value, attr = models.TrialModel, models.TrialValueModel, models.TrialUserAttributeModel
    with _create_scoped_session(backend.scoped_session) as session:
        trial_id = session.execute(sa.select(trial.trial_id).where(
            trial.study_id == study_id, trial.number == number)).scalar_one()
        moved = session.execute(
            sa.update(trial).where(trial.trial_id == trial_id, trial.state == TrialState.COMPLETE)
            .values(state=TrialState.FAIL).execution_options(synchronize_session=False)).rowcount == 1
        if not moved:
            return False
        held = {str(o): _held(v, kind) for o, v, kind in session.execute(
            sa.select(value.objective, value.value, value.value_type).where(value.trial_id == trial_id)
            .order_by(value.objective))}
        session.execute(sa.delete(value).where(value.trial_id == trial_id).execution_options(
            synchronize_session=False))
        attrs = {VALUES_ATTR: held, "status": "failed", "failure_class": FAILURE_CLASS,
                 "failure_message": f"{problem}; failed by `tuner study run`, which cannot sample "
                                    f"past it, with its stored values kept in {VALUES_ATTR}"}
        session.execute(sa.delete(attr).where(attr.trial_id == trial_id, attr.key.in_(list(attrs)))
                        .execution_options(synchronize_session=False))
        session.add_all([attr(trial_id=trial_id, key=k, value_json=json.dumps(v)) for k, v in attrs.items()])
    return True
