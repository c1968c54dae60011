"""A study's trials as stored, even when Optuna cannot build one of them.

SQLite keeps a NaN as NULL. Optuna's RDB storage writes an objective value of NaN as it is (only
``study.tell`` refuses one; ``storage.set_trial_state_values`` and other tools do not), so the row
reads back as NULL, and Optuna's reader asserts that a finite value is not NULL
(``optuna/storages/_rdb/models.py``, ``TrialValueModel.stored_repr_to_value``): one such row made
``study.get_trials()`` raise ``AssertionError`` for the whole study, and every reader (status,
pareto, export, report) ended in a traceback (QA). :func:`stored_trials` reads such a study one
trial at a time instead, and hands back the trial Optuna cannot build as an :class:`UnbuiltTrial`,
which the readers show as unreadable, never as a result.

Reads only; raises what the storage raises, except that assertion.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: why an :class:`UnbuiltTrial` could not be read
UNBUILT_PROBLEM = ("a stored objective value is not a number (SQLite keeps a NaN as NULL, "
                   "which Optuna cannot read back)")


@dataclass
class UnbuiltTrial:
    """A trial whose stored values Optuna cannot read: its number and user attributes only."""

    number: int
    user_attrs: dict[str, Any]
    problem: str = UNBUILT_PROBLEM


def stored_trials(study) -> list:
    """Every trial of ``study`` in number order: Optuna's ``FrozenTrial``, or an
    :class:`UnbuiltTrial` where Optuna's reader fails its own assertion on a stored value.

    The one-at-a-time reading uses the storage and study id the Optuna ``Study`` holds
    (``_storage``, ``_study_id``: Optuna keeps no public way to them) and runs only when reading the
    whole study failed, so a healthy study costs one query as before."""
    try:
        return list(study.get_trials(deepcopy=False))
    except AssertionError:
        pass
    storage, study_id = study._storage, study._study_id
    out: list = []
    while True:
        try:  # Optuna numbers a study's trials 0, 1, 2, ... with no gap
            trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, len(out))
        except KeyError:
            return out
        try:
            out.append(storage.get_trial(trial_id))
        except AssertionError:
            out.append(UnbuiltTrial(len(out), _user_attrs(storage, trial_id)))


def _user_attrs(storage, trial_id: int) -> dict[str, Any]:
    """A trial's user attributes, read apart from its values: the RDB storage queries them on their
    own, which the bad value does not reach; Optuna's cache in front of it (``_backend``) would build
    the whole trial first. Empty when even that fails."""
    try:
        return dict(getattr(storage, "_backend", storage).get_trial_user_attrs(trial_id))
    except AssertionError:
        return {}
