"""The autoregressive baseline: the same server without speculation, measured once per study.

It lives in a companion Optuna study ``NAME.baseline`` (see :data:`tuner.engine.study.BASELINE_SUFFIX`):
its trials give an atomic order and heartbeats, so several workers starting at once measure it once
(claim ``"baseline"``), and a dead worker's baseline is retried like any trial.

Contract of :func:`ensure_baseline`: it returns the study's current baseline, measuring it first
when there is none (or when ``rebaseline`` asks for a new one); a failed measurement raises
:class:`BaselineError` and the run stops, since nothing else could be compared. The measurement is
journaled and told by the ``measure`` callback (:meth:`tuner.engine.trial.TrialRunner.measure`),
like any trial's.

All nodes of a study must run the same hardware: the baseline records what its server ran on
(:data:`tuner.engine.facts.HARDWARE_ATTR`, :func:`tuner.engine.facts.node_hardware`), and a worker
whose own differs stops (:class:`OtherHardware`) before it launches anything, rather than divide its
trials' figures by another node's baseline. A baseline stored without it (an older tuner's) judges
nothing, and ``rebaseline`` measures a new one here (the study moved to this hardware).
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import Callable

from .asktell import tell
from .facts import HARDWARE_ATTR, describe_hardware, hardware_difference, node_hardware
from .interrupted import release_interrupted
from .patience import StorageUnavailable, unreachable_now
from .records import MEASURED, StoredFigures, attrs_problem, values_problem
from .stall import STALLS_IN_A_ROW, TunerKeepsStalling, TunerStalled
from .stored_trials import UnbuiltTrial, stored_trials
from .study import BASELINE_SUFFIX, StudyReplaced, create_baseline_study
from .unreadable_trials import fail_unreadable_trials
from .workers import (TakenBeforeSuite, Worker, fail_running, reap_dead_trials, start_trial, try_claim,
                      wait_for_claim)

Event = Callable[[str, dict], None]

#: A baseline trial's attribute: why it was measured again -- a trial read faster over the baseline
#: before it than its accept length allows (:mod:`tuner.engine.suspect`); such a baseline is not
#: measured again for the same reason (one re-measurement per suspicion, bounded).
REMEASURED_FOR = "remeasured_for"


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


class OtherHardware(BaselineError):
    """This node runs other hardware than the node that measured the study's baseline: its trials'
    figures divided by that baseline cannot be right, so the worker stops before its first launch."""

    def __init__(self, line: str):
        self.measurement = None
        RuntimeError.__init__(self, line)


def stored_node_hardware(study) -> dict | None:
    """This node's hardware for ``study`` (:func:`tuner.engine.facts.node_hardware`), from the
    study's stored config and space: what every worker launches, whatever file it was given."""
    from ..config.space import SearchSpaceConfig
    from ..config.study import study_from_dict
    from ..config.yamlfile import parse_model
    from .study import CONFIG_ATTR, SPACE_ATTR

    attrs = study.user_attrs
    if CONFIG_ATTR not in attrs or SPACE_ATTR not in attrs:
        return None  # no tuner config stored: nothing tells what its servers run on
    config = study_from_dict(attrs[CONFIG_ATTR])
    fixed = parse_model(SearchSpaceConfig, attrs[SPACE_ATTR], "<stored search space>").fixed
    return node_hardware(config.server, fixed)


def check_hardware(study, baseline: Baseline, here: dict | None, worker: Worker) -> None:
    """Raise :class:`OtherHardware` (one line: both nodes' hardware and the fix) when ``here``, this
    node's hardware, is not the one ``baseline`` was measured on; nothing when either is unknown."""
    stored = baseline.attrs.get(HARDWARE_ATTR)
    what = hardware_difference(stored, here)
    if what is None:
        return
    by = baseline.attrs.get("worker")
    node = by.get("host") if isinstance(by, dict) and by.get("host") else "another node"
    raise OtherHardware(
        f"this node ({worker.host}) runs {describe_hardware(here)}, but study {study.study_name}'s baseline "
        f"(trial {baseline.trial_number}) was measured on {node} with {describe_hardware(stored)}: the "
        f"{what} differs, and its trials would be compared with another hardware's baseline; run this node "
        f"under a study of its own, or, if the whole study moved to this hardware, run with --rebaseline")


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


def ensure_baseline(study, worker: Worker, measure: Callable, emit: Event, rebaseline: bool,
                    hardware: Callable[[], dict | None] | None = None, newer_than: int | None = None,
                    because: str | None = None) -> Baseline:
    """The study's baseline, measured here when there is none yet (or ``rebaseline``).

    ``newer_than`` (with ``rebaseline``): any baseline begun after that baseline trial will do, this
    worker's or another's (several workers suspecting one baseline at once measure it once);
    ``because``: why it is measured again, stored on it (:data:`REMEASURED_FOR`).

    ``hardware()``: this node's hardware (default :func:`stored_node_hardware`), asked once: stored
    on a baseline measured here, compared with one another node measured (:func:`check_hardware`,
    which raises :class:`OtherHardware` before this worker launches anything).

    ``measure(trial, baseline_study)`` measures the autoregressive server for the RUNNING baseline
    ``trial`` and stores its figures on it (see :meth:`tuner.engine.trial.TrialRunner.measure`).
    Another worker measuring the baseline is waited for, not duplicated.
    """
    from optuna.trial import TrialState

    storage = study._storage
    asked: list = []

    def here() -> dict | None:
        if not asked:
            asked.append((hardware or (lambda: stored_node_hardware(study)))())
        return asked[0]

    def judged(b: Baseline) -> Baseline:
        check_hardware(study, b, here(), worker)
        return b

    bstudy = create_baseline_study(study)
    for number, note in fail_unreadable_trials(bstudy):  # reaping and asking read past none (unreadable_trials.py)
        emit("warning", {"trial": f"baseline (trial {number})", "message": note})
    current = find_baseline(study)
    if current and not rebaseline:
        judged(current)
        emit("baseline", {"reused": True, "figures": current.figures.__dict__})
        return current
    after = current.trial_number if current else -1
    if newer_than is not None:
        after = newer_than
    stalls = 0  # this worker's baseline measurements in a row during which it stood still
    while True:
        reap_dead_trials(bstudy)
        done = find_baseline(study)
        if done and done.trial_number > after:
            return judged(done)
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
                return judged(done)
            mine = here()
            if mine is not None:  # what this baseline is measured on, before its server is launched
                trial.set_user_attr(HARDWARE_ATTR, mine)
            if because:
                trial.set_user_attr(REMEASURED_FOR, because)
            emit("trial_start", {"trial": "baseline", "spec": None})
            try:
                m = measure(trial, bstudy)
            except (StorageUnavailable, StudyReplaced):
                raise  # nothing more can be written; the measurement, if any, waits in the journal
            except TakenBeforeSuite as exc:
                # failed as dead by another worker while this one stood still during its server's
                # load (trial.TrialRunner._look_before_suite): nothing measured; the baseline that
                # worker measures is found, or waited for, as at the start
                emit("warning", {"trial": "baseline", "message": str(exc)})
                continue
            except TunerStalled as exc:  # the tuner stood still, not the server: measure it again
                # One conditional UPDATE (workers.fail_running), not a look, then tell: a worker that
                # stood still past the heartbeat grace is failed as stale by another meanwhile, and
                # a FAIL landing between the two raised out of this worker (QA, qa93, PostgreSQL:
                # UpdateFinishedTrialError; tests/engine/test_baseline_stall_and_reaper.py).
                fail_running(storage, trial._trial_id)
                stalls += 1
                if stalls >= STALLS_IN_A_ROW:
                    emit("warning", {"trial": "baseline", "message": str(exc)})
                    raise TunerKeepsStalling("baseline measurements", exc) from None
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
        # another worker failed as dead meanwhile was stored as a new trial (tuner.engine.finish),
        # and the baseline that worker measured since is the study's: judged as any other node's
        # (QA, qa155: measured on other GPUs, this node's trials were judged against it).
        done = find_baseline(study)
        if done and done.trial_number > after:
            return judged(done)
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
