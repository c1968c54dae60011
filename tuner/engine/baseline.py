"""The autoregressive baseline: the same server without speculation, measured once per study.

It lives in a companion Optuna study ``NAME.baseline`` (see :data:`tuner.engine.study.BASELINE_SUFFIX`):
its trials give an atomic order and heartbeats, so several workers starting at once measure it once
(claim ``"baseline"``), and a dead worker's baseline is retried like any trial.

Contract of :func:`ensure_baseline`: it returns the study's current baseline, measuring it first
when there is none (or when ``rebaseline`` asks for a new one); a failed measurement raises
:class:`BaselineError` and the run stops, since nothing else could be compared. The measurement is
journaled and told by the ``measure`` callback (:meth:`tuner.engine.trial.TrialRunner.measure`),
like any trial's.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import Callable

from .asktell import tell
from .interrupted import release_interrupted
from .patience import StorageUnavailable, unreachable_now
from .records import MEASURED, StoredFigures, attrs_problem, values_problem
from .stall import TunerStalled
from .stored_trials import UnbuiltTrial, stored_trials
from .study import BASELINE_SUFFIX, StudyReplaced, create_baseline_study
from .unreadable_trials import fail_unreadable_trials
from .workers import Worker, fail_running, reap_dead_trials, start_trial, try_claim, wait_for_claim

Event = Callable[[str, dict], None]


@dataclass
class Baseline:
    figures: StoredFigures
    attrs: dict
    trial_number: int


class BaselineError(RuntimeError):
    """The baseline could not be measured: nothing else can be compared, so the run stops."""

    def __init__(self, m, why: str | None = None):
        self.measurement = m
        why = why or f"({m.failure_class}): {m.failure_message}"
        # a launch's or a hang's message names its log already (QA: "(log: X); log: X")
        named = not m.log_path or f"(log: {m.log_path})" in why
        super().__init__(f"the autoregressive baseline failed {why}"
                         + ("" if named else f"; log: {m.log_path}"))


def find_baseline(study) -> Baseline | None:
    """The completed baseline measurement of a study that began last (:func:`_started`), if any."""
    import optuna
    from optuna.trial import TrialState

    try:
        bstudy = optuna.load_study(study_name=study.study_name + BASELINE_SUFFIX, storage=study._storage)
    except KeyError:
        return None
    # stored_trials: a NaN value stored in SQLite made get_trials raise (QA); such a trial is no baseline
    # values_problem: a NaN PostgreSQL keeps, or an inf, is failed by the next run (unreadable_trials.py)
    names = list(bstudy.metric_names or [])
    done = [t for t in stored_trials(bstudy)
            if not isinstance(t, UnbuiltTrial) and t.state == TrialState.COMPLETE
            and t.user_attrs.get("status") == MEASURED and attrs_problem(t.user_attrs) is None
            and values_problem(t.values, names) is None]
    if not done:
        return None
    t = max(done, key=_started)
    return Baseline(StoredFigures.from_attrs(t.user_attrs), dict(t.user_attrs), t.number)


def _started(t) -> tuple[int, int]:
    """When a baseline measurement began, in trial order: a re-homed copy (tuner.engine.finish,
    ``replayed_from``) began as the trial it copies. A worker paused past the heartbeat's grace
    during its baseline has it failed as dead, and another worker measures the baseline again and
    judges its trials against that one; the first, woken, then stores its measurement as a new,
    later trial, which took the baseline's place (QA, qa125: the later trials were judged against
    another baseline than the earlier, and status showed figures no trial was judged against)."""
    first = t.user_attrs.get("replayed_from")
    return (first if isinstance(first, int) and not isinstance(first, bool) else t.number, t.number)


def baseline_problem(study) -> str | None:
    """What became of the study's latest baseline launch when no readable baseline stands: it
    failed (its class and message), or it measured but its attributes cannot be read (edited by
    hand, see :func:`tuner.engine.records.attrs_problem`); None when a baseline stands or none ran."""
    import optuna
    from optuna.trial import TrialState

    try:
        bstudy = optuna.load_study(study_name=study.study_name + BASELINE_SUFFIX, storage=study._storage)
    except KeyError:
        return None
    launched = [t for t in stored_trials(bstudy) if isinstance(t, UnbuiltTrial)
                or (t.state in (TrialState.COMPLETE, TrialState.FAIL)
                    and (t.user_attrs.get("status") == MEASURED or t.user_attrs.get("failure_class")))]
    if not launched or find_baseline(study) is not None:
        return None
    if isinstance(launched[-1], UnbuiltTrial):
        return f"measured, but unreadable ({launched[-1].problem})"
    attrs = launched[-1].user_attrs
    if attrs.get("status") != MEASURED:
        message = " ".join(str(attrs.get("failure_message") or "").split())[:200]
        return f"its last launch failed ({attrs.get('failure_class')}{': ' + message if message else ''})"
    problem = attrs_problem(attrs) or values_problem(launched[-1].values, list(bstudy.metric_names or []))
    return None if problem is None else f"measured, but unreadable ({problem})"


def ensure_baseline(study, worker: Worker, measure: Callable, emit: Event, rebaseline: bool) -> Baseline:
    """The study's baseline, measured here when there is none yet (or ``rebaseline``).

    ``measure(trial, baseline_study)`` measures the autoregressive server for the RUNNING baseline
    ``trial`` and stores its figures on it (see :meth:`tuner.engine.trial.TrialRunner.measure`).
    Another worker measuring the baseline is waited for, not duplicated.
    """
    from optuna.trial import TrialState

    storage = study._storage
    bstudy = create_baseline_study(study)
    for number, note in fail_unreadable_trials(bstudy):  # reaping and asking read past none (unreadable_trials.py)
        emit("warning", {"trial": f"baseline (trial {number})", "message": note})
    current = find_baseline(study)
    if current and not rebaseline:
        emit("baseline", {"reused": True, "figures": current.figures.__dict__})
        return current
    after = current.trial_number if current else -1
    while True:
        reap_dead_trials(bstudy)
        done = find_baseline(study)
        if done and done.trial_number > after:
            return done
        with ExitStack() as stack:
            trial = start_trial(bstudy, worker, stack)
            if not try_claim(bstudy, trial, "baseline"):
                # Another worker is measuring the baseline: wait for it (or for it to die).
                tell(bstudy, trial, state=TrialState.FAIL)
                emit("waiting", {"for": "the baseline, measured by another worker"})
                wait_for_claim(bstudy, "baseline")
                continue
            done = find_baseline(study)
            if done and done.trial_number > after:
                # Another worker finished it between our look and our claim.
                tell(bstudy, trial, state=TrialState.FAIL)
                return done
            emit("trial_start", {"trial": "baseline", "spec": None})
            try:
                m = measure(trial, bstudy)
            except (StorageUnavailable, StudyReplaced):
                raise  # nothing more can be written; the measurement, if any, waits in the journal
            except TunerStalled as exc:  # the tuner stood still, not the server: measure it again
                # One conditional UPDATE (workers.fail_running), not a look, then tell: a worker that
                # stood still past the heartbeat grace is failed as stale by another meanwhile, and
                # a FAIL landing between the two raised out of this worker (QA, qa93, PostgreSQL:
                # UpdateFinishedTrialError; tests/engine/test_baseline_stall_and_reaper.py).
                fail_running(storage, trial._trial_id)
                emit("warning", {"trial": "baseline", "message": f"{exc}; measuring it again"})
                continue
            except BaseException:
                # Ctrl-C or a crash of the tuner: nothing measured; the next run measures it again. A
                # statement it cut short holds SQLite's read lock until freed (interrupted.py; QA: the
                # write below waited the whole storage patience on this worker's own lock, exit 75)
                release_interrupted()
                if not unreachable_now(storage):
                    fail_running(storage, trial._trial_id)  # as above: the error raised is the cause's
                raise
        # The measurement is told by now (failed when it measured nothing usable); a measurement
        # another worker failed as dead meanwhile was stored as a new trial (tuner.engine.finish).
        done = find_baseline(study)
        if done and done.trial_number > after:
            return done
        if m.failure_class:
            raise BaselineError(m)
        raise BaselineError(m, "it measured no " + ", ".join(bstudy.metric_names or [])
                            + ": the suite does not measure what the objectives need")


def baseline_values(bstudy, attrs: dict, names: list[str] | None = None) -> list[float] | None:
    """The baseline's own figures in ``attrs``, as its study's metrics (``single_tok_per_s``,
    ``tok_per_s@C``): what optuna-dashboard shows for it. None when one is missing.

    ``names``: the baseline study's metric names, read by the caller beforehand; None reads them
    from the storage now, a call that waits out an outage. A measurement just taken must not make
    it before its journal entry: the storage down for the patience then ended the worker with the
    measurement in neither (QA, qa148: ``nothing measured is waiting``, the baseline measured again)."""
    from .objectives import figure

    figures = StoredFigures.from_attrs(attrs)
    if names is None:
        names = list(bstudy.metric_names or [])
    values = [figure(name, figures) for name in names]
    return None if not values or any(v is None for v in values) else [float(v) for v in values]
