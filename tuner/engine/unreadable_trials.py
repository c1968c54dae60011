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

Optuna writes no finished trial (``UpdateFinishedTrialError``), so this is SQL on its tables, in
one transaction per trial. The state moves only from COMPLETE (``WHERE state = 'COMPLETE'``), and
the values and attributes are written only by the transaction that moved it: a retry after a commit
that landed, or a second worker doing the same at once, changes nothing. Raises what the database
raises; a patient storage retries it through outages like its own calls.
"""

from __future__ import annotations

import json

from .stored_trials import UNBUILT_PROBLEM, UnbuiltTrial, stored_trials

#: the user attribute that keeps a failed trial's unreadable values
VALUES_ATTR = "unreadable_values"
#: its ``failure_class``
FAILURE_CLASS = "unreadable"
#: the warning a worker gives for each trial it failed here
FAILED_NOTE = ("its stored objective value is not a number, which Optuna cannot read back: failed, its "
               f"stored values kept in its user attribute {VALUES_ATTR}; the setting may be measured again")


def fail_unreadable_trials(study) -> list[int]:
    """Fail every COMPLETE trial of ``study`` (an Optuna ``Study`` on an RDB storage) whose stored
    values Optuna cannot read; the numbers of those this call failed, in order."""
    from .asktell import _patiently

    bad = [t.number for t in stored_trials(study) if isinstance(t, UnbuiltTrial)]
    return [n for n in bad if _patiently(study._storage, "fail_unreadable", _fail, study._study_id, n)]


def _fail(backend, study_id: int, number: int) -> bool:
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
        held = {str(o): v for o, v in session.execute(
            sa.select(value.objective, value.value).where(value.trial_id == trial_id).order_by(value.objective))}
        session.execute(sa.delete(value).where(value.trial_id == trial_id).execution_options(
            synchronize_session=False))
        attrs = {VALUES_ATTR: held, "status": "failed", "failure_class": FAILURE_CLASS,
                 "failure_message": f"{UNBUILT_PROBLEM}; failed by `tuner study run`, which cannot sample "
                                    f"past it, with its stored values kept in {VALUES_ATTR}"}
        session.execute(sa.delete(attr).where(attr.trial_id == trial_id, attr.key.in_(list(attrs)))
                        .execution_options(synchronize_session=False))
        session.add_all([attr(trial_id=trial_id, key=k, value_json=json.dumps(v)) for k, v in attrs.items()])
    return True
