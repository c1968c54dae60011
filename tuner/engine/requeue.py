"""Queueing a setting again after its trial died: the retry carries the setting, never a result.

Optuna's ``RetryHeartbeatStaleTrialCallback`` copies the dead trial's user and system attributes
into the retry. For the tuner that copy is wrong: a worker killed between writing a trial's
``status`` and its ``tell`` left ``status: measured``, figures, a claim, a ``launching`` mark and
constraints on it, and a retry carrying them was counted as a launch, or reused with placeholder
values, before it measured anything. :func:`requeue` queues the same parameters with nothing but
where they come from: ``retry_of`` (user attribute) and Optuna's ``failed_trial`` /
``retry_history`` (system attributes, so ``RetryHeartbeatStaleTrialCallback.retried_trial_number``
still works).
"""

from __future__ import annotations

#: System attributes a retry keeps: Optuna's retry bookkeeping and the enqueued parameters.
_KEPT_SYSTEM_ATTRS = ("fixed_params",)


def requeue(study, trial, max_retry: int | None = None) -> bool:
    """Queue ``trial``'s parameters again (a WAITING trial); False when it has no parameters or
    has been retried ``max_retry`` times already. A queued trial failed after its worker took it
    and before its sampler proposed (tuner.engine.workers.start_trial names the worker first) has
    no parameters yet, only the ones it was queued with (Optuna's ``fixed_params``): those are
    queued again, as ``enqueue_trial`` queues them."""
    import optuna
    from optuna.trial import TrialState

    if not trial.params and not trial.system_attrs.get("fixed_params"):
        return False
    history = [*trial.system_attrs.get("retry_history", []), trial.number]
    if max_retry is not None and len(history) > max_retry:
        return False
    system_attrs = {k: trial.system_attrs[k] for k in _KEPT_SYSTEM_ATTRS if k in trial.system_attrs}
    system_attrs.update(failed_trial=trial.system_attrs.get("failed_trial", trial.number), retry_history=history)
    study.add_trial(optuna.trial.create_trial(
        state=TrialState.WAITING, params=trial.params, distributions=trial.distributions,
        user_attrs={"retry_of": trial.number}, system_attrs=system_attrs))
    return True


class RetryStaleTrial:
    """The storage's heartbeat-stale callback: :func:`requeue`, at most ``max_retry`` times per setting."""

    def __init__(self, max_retry: int | None = None):
        self.max_retry = max_retry

    def __call__(self, study, trial) -> None:
        requeue(study, trial, self.max_retry)


#: User attributes a trial may bring from the queue: where it comes from, nothing it measured.
_FROM_THE_QUEUE = ("retry_of", "seed")


def clear_inherited(storage, trial_id: int) -> list[str]:
    """Blank what a retry queued by an older tuner (Optuna's callback) copied from its dead
    original: every user attribute but :data:`_FROM_THE_QUEUE` (set to None; Optuna cannot delete
    one), and the constraints (the list emptied, named ones neutral until this trial sets its own).
    Returns the attributes blanked (none for a trial queued by :func:`requeue`)."""
    frozen = storage.get_trial(trial_id)
    stale = [k for k, v in frozen.user_attrs.items() if k not in _FROM_THE_QUEUE and v is not None]
    for key in stale:
        storage.set_trial_user_attr(trial_id, key, None)
    for key in frozen.system_attrs:
        if key == "constraints":
            storage.set_trial_system_attr(trial_id, key, [])
        elif key.startswith("constraints:"):
            storage.set_trial_system_attr(trial_id, key, 0.0)
    return stale
