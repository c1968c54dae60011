"""Confirming the picks: re-measure candidate settings and the baseline, interleaved, several times.

A study's picks rest on one measurement each; with a few percent of run-to-run noise, settings a
few percent apart are a coin toss. :func:`run_confirmation` measures the baseline and every
candidate once per round, in the order baseline, A, B, ..., baseline, A, B, ... (so slow drift of
the machine shows as drift of the baseline and cancels in each round's ratio), and stores every
measurement as it is made, in a companion study ``NAME.confirm`` (one trial per measurement; the
study's own trials are never touched). What the repeats mean -- the confirmed means, their 95%
intervals and the picks -- is the results layer's (:mod:`tuner.results.confirmed`).

Contracts:

* Every measurement reaches storage before its server stops (the backend's ``record`` callback),
  tagged with the run id, the round and the candidate (a trial number, or ``baseline``).
* A failed launch or run is stored as a failed measurement and the run goes on: the round simply
  lacks that candidate. Ctrl-C stops the server (the backend's contract), fails the running
  measurement and propagates ``KeyboardInterrupt``; the rounds already stored stay usable.
* Confirmation launches do not count towards the study's ``budget.n_trials``.
* Each repeat is journaled before it is stored (:mod:`tuner.engine.finish`); what a killed run left
  in the journal is stored before the first round.
* A candidate's repeat faster over its round's baseline than its accept length allows suspects that
  baseline first (:mod:`tuner.engine.suspect`): it is measured again in the round, once, and the
  repeat judged again against it (:func:`_measure_once`); the round's last baseline is its baseline.
"""

from __future__ import annotations

import secrets
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Sequence

from ..bench.open_files import TunerOutOfFiles
from ..config.study import CONFIRM_SUFFIX
from ..config.yamlfile import ConfigError
from ..sglang.rules import SpecConfig
from .asktell import parse_utc, tell, utc_now
from .baseline import REMEASURED_FOR, find_baseline
from .deadline import apply_trial_deadline
from .finish import finish_of, journal_finish, record_finish, replay_journal, write_files
from .journal import Journal
from .measurement import ServerOutOfThreads
from .outcome import is_figure, limit_attrs, measurement_attrs, speedups, timed_speedup_problem
from .patience import StorageUnavailable, patient_backend, unreachable_now
from .records import FAILED, INTERRUPTED, MEASURED, StoredFigures
from .stall import StallWatch, TunerStalled
from .storage import storage_label
from .study import CONFIG_ATTR, READY_ATTR, UID_ATTR, StudyReplaced, study_replaced, study_uid
from .verify import longest_outside_wait_s
from .workers import Worker, start_trial

BASELINE = "baseline"
#: The time in a run id (``20261205T043841Z-1a2b``): UTC, whole seconds.
RUN_TIME = "%Y%m%dT%H%M%SZ"
#: How often a repeat the tuner's own pause spoiled is measured again before it counts as failed.
STALL_RETRIES = 3
Event = Callable[[str, dict], None]


def _noop(kind: str, info: dict) -> None:
    pass


@dataclass(frozen=True)
class Candidate:
    """A setting to confirm: the trial whose measurement it repeats and the picks it stands for."""

    trial: int
    spec: SpecConfig
    picks: tuple[str, ...] = ()


@dataclass
class ConfirmSummary:
    run: str
    rounds: int
    measured: int = 0
    failed: list[str] = field(default_factory=list)  #: "round R: trial N (failure class)"


def confirm_study_name(name: str) -> str:
    return name + CONFIRM_SUFFIX


def open_confirm_study(study, create: bool = False, on_replaced: Callable[[str], None] | None = None):
    """The companion study holding ``study``'s confirmation measurements; None if there is none
    yet, or if the one of that name was left by an earlier study of the name (:func:`_left_by_another`),
    which ``create`` deletes, telling ``on_replaced``: it measured other settings, and its study was
    deleted."""
    import optuna

    name = confirm_study_name(study.study_name)
    try:
        cstudy = optuna.load_study(study_name=name, storage=study._storage)
    except KeyError:
        cstudy = None
    if cstudy is not None and _left_by_another(cstudy, study):
        if not create:
            return None
        if CONFIG_ATTR in cstudy.user_attrs:  # a tuner study of its own (copied in under this name)
            raise ConfigError(study.study_name, name, "is a tuner study of its own, not this study's "
                              "confirmation; copy it to another name and delete it, then confirm again")
        optuna.delete_study(study_name=name, storage=study._storage)
        if on_replaced is not None:
            on_replaced(f"{name} was left by an earlier study of this name (deleted since): replaced")
        cstudy = None
    if cstudy is None and create:
        cstudy = optuna.create_study(study_name=name, storage=study._storage, direction="maximize",
                                     load_if_exists=True)
        cstudy.set_user_attr(UID_ATTR, study_uid(study))
    return cstudy


def _left_by_another(cstudy, study) -> bool:
    """Whether the confirmation companion belongs to another study of the same name (one deleted
    since): its id is not the study's; one from before ids were stamped on companions is judged by
    time, a confirmation measured before the study was created being another's."""
    owner = cstudy.user_attrs.get(UID_ATTR)
    if owner is not None:
        return owner != study.user_attrs.get(UID_ATTR)
    # (a created_at another tool wrote, in a form Python 3.10 cannot read or none: cannot tell, as none)
    born = parse_utc(study.user_attrs.get(READY_ATTR))
    started = [s for s in map(measured_from, cstudy.get_trials(deepcopy=False)) if s is not None]
    if born is None or not started:
        return False
    return any(s < born for s in started)


def measured_from(trial) -> datetime | None:
    """When a repeat's confirmation run started, as an aware time: its run id's time, which this
    tuner stamps on every repeat from a UTC clock (:func:`run_confirmation`); for a trial without
    one (another tool's), Optuna's start time.

    Optuna's start time is second best: RDB storage keeps it as naive UTC and hands it back as the
    reader's local wall time without a zone (optuna/storages/_rdb/models.py, ``datetime_start``),
    so ``astimezone()`` reads it right except within the hour a DST change repeats, where the
    dropped ``fold`` puts it an hour early (QA: in America/Los_Angeles a study created at the second
    01:30 of 2026-11-01 had its own companion, measured at 01:40, judged another's)."""
    run = trial.user_attrs.get("run")
    if isinstance(run, str):
        try:
            return datetime.strptime(run.partition("-")[0], RUN_TIME).replace(tzinfo=timezone.utc)
        except ValueError:
            pass
    return None if trial.datetime_start is None else trial.datetime_start.astimezone()


def _too_fast(attrs: dict, spec: SpecConfig | None, config, round_base: dict | None) -> str | None:
    """Why a candidate's repeat cannot be true against its round's baseline, or None (the
    baseline itself, a round whose baseline failed, ``backend: model``, which has no clock)."""
    base = (round_base or {}).get("figures")
    if spec is None or base is None:
        return None
    return timed_speedup_problem(speedups(StoredFigures.from_attrs(attrs), base), attrs.get("accept_length"),
                                 spec.num_steps, config, "every candidate of a round reading so points at "
                                 "that round's baseline, measured just before them: confirm again",
                                 spec.num_draft_tokens)


def run_confirmation(study, config, backend, candidates: Sequence[Candidate], repeats: int,
                     on_event: Event = _noop) -> ConfirmSummary:
    """Measure the baseline and ``candidates`` ``repeats`` times, interleaved; store every repeat."""
    if repeats < 2:
        raise ValueError("confirmation needs at least 2 rounds for an interval")
    if not candidates:
        raise ValueError("nothing to confirm")
    patient = patient_backend(study._storage)
    if patient is not None:
        patient.on_outage = on_event  # "storage_down" / "storage_back" progress lines, as a run's
    base = find_baseline(study)
    apply_trial_deadline(backend, config, base.attrs if base else None, on_event)
    cstudy = open_confirm_study(study, create=True,
                                on_replaced=lambda line: on_event("warning", {"message": line}))
    # What a killed run (this command's or `tuner study run`'s) left in the journal, stored first.
    replay_journal(study, config.workdir or Path("studies") / config.name)
    # ... and the servers it left running stopped, as a run stops them: they hold the GPUs (and a
    # fixed port) this command's launches need (QA: a confirm killed with -9 and run again launched
    # six servers beside its orphan, on a GPU node each an oom)
    stopped = getattr(backend, "cleanup_orphans", lambda: [])()
    if stopped:
        on_event("orphans", {"servers": stopped})
    run = datetime.now(timezone.utc).strftime(RUN_TIME) + "-" + secrets.token_hex(2)
    worker = Worker()
    uid = study_uid(study)  # in its journal entries: never replayed into another study of the name
    summary = ConfirmSummary(run, repeats)
    plan = [(BASELINE, None, ())] + [(c.trial, c.spec, c.picks) for c in candidates]
    on_event("confirm_start", {"run": run, "rounds": repeats, "candidates": [c.trial for c in candidates]})
    for rnd in range(repeats):
        # the round's baseline figures, once measured: its candidates are judged by them
        round_base: dict = {}
        for who, spec, picks in plan:
            label = "baseline" if who == BASELINE else f"trial {who}"
            on_event("trial_start", {"trial": BASELINE if who == BASELINE else f"{who} (confirm round {rnd + 1}/{repeats})",
                                     "spec": None if spec is None else spec.label()})
            status, failure = _measure_one(cstudy, config, backend, worker, run, rnd, who, spec, picks, on_event,
                                           uid, round_base)
            if status == MEASURED:
                summary.measured += 1
            else:
                summary.failed.append(f"round {rnd + 1}: {label} ({failure})")
            on_event("confirm_done", {"round": rnd, "candidate": who, "status": status, "failure_class": failure})
    return summary


def _measure_one(cstudy, config, backend, worker: Worker, run: str, rnd: int, who, spec, picks, on_event,
                 uid: str | None = None, round_base: dict | None = None, because: str | None = None):
    """One repeat, stored; measured again (up to :data:`STALL_RETRIES` times) when the tuner itself
    stood still during it (:class:`~tuner.engine.stall.TunerStalled`): its figures would hold the
    pause, and the round's paired speedups with them. ``because``: why a baseline repeat is measured
    again in its round (:data:`~tuner.engine.baseline.REMEASURED_FOR`)."""
    for _ in range(STALL_RETRIES):
        try:
            return _measure_once(cstudy, config, backend, worker, run, rnd, who, spec, picks, on_event, uid,
                                 round_base, because)
        except TunerStalled as exc:
            label = "the baseline" if who == BASELINE else f"trial {who}"
            on_event("warning", {"trial": None, "message": f"confirm round {rnd + 1}: {label}: {exc}; "
                                                           "measuring it again"})
    return FAILED, INTERRUPTED


def _measure_once(cstudy, config, backend, worker: Worker, run: str, rnd: int, who, spec, picks, on_event,
                  uid: str | None = None, round_base: dict | None = None, because: str | None = None):
    """One repeat, stored. ``round_base`` carries the round's baseline figures from its baseline
    repeat to its candidates: a candidate faster than its accept length allows over them fails as
    ``bad_response`` (:func:`tuner.engine.outcome.speedup_problem`, as a trial of the study does),
    so a lying server's repeat never enters the confirmed means -- once the round's baseline, the
    suspect first, was measured again (:mod:`tuner.engine.suspect`): the candidate's verdict is
    journaled and held until its server stops, the baseline measured again in the round (once per
    round; the round's baseline from then on, as the latest of the round), and the repeat judged
    again against it."""
    from optuna.trial import TrialState

    def check_study() -> None:
        # The study deleted under this command (tuner study delete --force), perhaps made anew under
        # its name: nothing more is written into its confirmation, nor into another study's (QA,
        # qa205: a repeat's finish met the trial gone and ended the command in a traceback, KeyError
        # 'Record does not exist.'). The companion carries its study's id (open_confirm_study).
        if study_replaced(cstudy, uid):
            raise StudyReplaced(config.name)

    check_study()
    workdir = Path(config.workdir or Path("studies") / config.name)
    journal = Journal(workdir)
    with ExitStack() as stack:
        trial = start_trial(cstudy, worker, stack)
        for k, v in {"run": run, "round": rnd, "candidate": who, "picks": list(picks),
                     "effective": None if spec is None else spec.as_dict()}.items():
            trial.set_user_attr(k, v)
        if because:
            trial.set_user_attr(REMEASURED_FOR, because)
        outcome: dict = {}
        held: dict = {}
        watch = StallWatch()

        def verdict(m, base: dict | None) -> tuple[dict, bool, str | None]:
            attrs = measurement_attrs(m, spec)
            if m.figures is not None and not m.failure_class:
                attrs.update(limit_attrs(m.figures, config, None))
            failed = bool(m.failure_class) or bool(attrs.get("args_mismatch"))
            if attrs.get("args_mismatch") and not m.failure_class:
                attrs["failure_class"] = "args_mismatch"
            problem = None if failed else _too_fast(attrs, spec, config, base)
            if problem:
                failed = True
                attrs = {k: v for k, v in attrs.items() if not is_figure(k)} | {
                    "failure_class": "bad_response", "failure_message": problem}
            attrs.update(status=FAILED if failed else MEASURED, finished_at=utc_now())
            return attrs, failed, problem

        def store(m, attrs: dict, failed: bool, entry=None) -> None:
            if who == BASELINE and not failed and round_base is not None:
                round_base["figures"] = StoredFigures.from_attrs(attrs)
            outcome.update(status=attrs["status"], failure=attrs.get("failure_class"))
            # Journaled, figures first, then the suite's JSON (tuner.engine.finish); a repeat's
            # value is a placeholder: its figures are the result.
            finish = finish_of(cstudy, trial, attrs, None if failed else [0.0], {}, measured=not failed)
            record_finish(cstudy, finish, journal=journal, storage=storage_label(cstudy._storage),
                          suite=_suite(m), file_paths={"suite_json": m.result_path}, kind="confirm.", uid=uid,
                          held=entry, before_store=check_study,  # after the journal entry: it waits out an outage
                          files=lambda: write_files(cstudy, trial._trial_id, m.to_save, m.result_path,
                                                    None, workdir, artifacts=False))

        def record(m) -> None:
            watch.check(longest_outside_wait_s(m.to_save))  # the tuner paused: not the server's figures
            attrs, failed, problem = verdict(m, round_base)
            if problem and round_base is not None and not round_base.get("again"):
                # the round's baseline suspected first: decided once this server stopped (below)
                finish = finish_of(cstudy, trial, attrs, None, {}, measured=False)
                _, entry = journal_finish(finish, journal=journal, suite=_suite(m),
                                          file_paths={"suite_json": m.result_path},
                                          storage=storage_label(cstudy._storage), uid=uid)
                held.update(m=m, attrs=attrs, entry=entry)
                return
            store(m, attrs, failed)

        tag = "baseline" if who == BASELINE else f"t{who}"
        if because:
            tag += "-again"
        try:
            with watch:
                backend.measure(spec, f"confirm/{run}/{rnd}-{tag}", record, on_event=watch.suite_events(on_event))
            if held:
                m, attrs = held["m"], held["attrs"]
                round_base["again"] = True
                why = (f"round {rnd + 1}: trial {who} read faster over this round's baseline than its accept "
                       "length allows: that baseline's timing was suspected first")
                on_event("warning", {"trial": None, "message": f"confirm {why}; the round's baseline is "
                                                               "measured again"})
                status, failure = _measure_one(cstudy, config, backend, worker, run, rnd, BASELINE, None, (),
                                               on_event, uid, round_base, because=why)
                if status == MEASURED:
                    attrs, failed, _ = verdict(m, round_base)
                    if failed:
                        attrs["failure_message"] += ("; judged again against this round's baseline measured "
                                                     "again, it still reads so: this server's timing is the suspect")
                else:
                    failed = True
                    attrs["failure_message"] += ("; not judged again: the round's baseline measured again "
                                                 f"failed ({failure})")
                store(m, attrs, failed, held["entry"])
                held.clear()
        except (StorageUnavailable, StudyReplaced):
            raise  # nothing more can be written; the measurement, if any, waits in the journal
        except BaseException as exc:
            if held and not unreachable_now(cstudy._storage):
                store(held["m"], held["attrs"], True, held["entry"])  # the verdict as it stood: nothing lost
            elif not unreachable_now(cstudy._storage) and \
                    cstudy._storage.get_trial(trial._trial_id).state == TrialState.RUNNING:
                if isinstance(exc, TunerStalled):
                    trial.set_user_attr("status", INTERRUPTED)
                    trial.set_user_attr("note", f"{exc}; measured again")
                elif isinstance(exc, TunerOutOfFiles):  # the tuner's ulimit -n, not the server's failure
                    trial.set_user_attr("status", INTERRUPTED)
                    trial.set_user_attr("note", str(exc).partition("; ")[0])
                elif isinstance(exc, ServerOutOfThreads):  # the node's ulimit -u, not the setting's failure
                    trial.set_user_attr("status", INTERRUPTED)
                    trial.set_user_attr("note", str(exc).partition("; no setting")[0])
                tell(cstudy, trial, state=TrialState.FAIL)
            raise
    return outcome.get("status", FAILED), outcome.get("failure")


def _suite(m) -> dict | None:
    return m.to_save.to_dict() if hasattr(m.to_save, "to_dict") else None
