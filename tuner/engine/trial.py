"""One trial, end to end: ask, apply SGLang's rules, reuse or claim, check the budget, measure, tell.

:class:`TrialRunner` holds what every trial of one worker shares (config, study, space, backend,
worker identity) and runs a trial as a few named steps:

1. :meth:`TrialRunner.run_one` asks Optuna for a trial and keeps a heartbeat on it throughout;
2. :meth:`~TrialRunner._resolve`: a setting SGLang would refuse is recorded ``invalid``, never launched;
3. :meth:`~TrialRunner._reuse_or_claim`: a setting whose effective config was measured before reuses
   that measurement; otherwise the worker claims it (claim-then-look, :mod:`tuner.engine.workers`).
   A trial the sampler marked as a deliberate re-measurement (system attribute
   :data:`REMEASURE_ATTR`, set by :mod:`tuner.engine.structured`) of a setting measured before is
   launched again instead, unless another worker is measuring that setting right now (then it is
   reused); its record names the first measurement (``remeasure_of``), and readers average the
   measurements of one setting (:func:`tuner.engine.records.merge_repeats`). The default sampler's
   own proposal (:data:`PROPOSAL_ATTR`) of a setting another worker is measuring steps aside
   (``abandoned``) and the sampler is asked again, where any other trial waits for that launch;
4. :meth:`~TrialRunner._budget_allows`: the study's launch budget, shared with the other workers;
   then :meth:`~TrialRunner._still_ours` reads the trial back from the database: a start or a claim
   the database forgot (a commit it acknowledged, then lost), or the trial failed by another worker
   that judged this one dead, makes the worker step aside, or claim again, rather than launch a
   setting another worker may be launching too; its warning names the cause the database shows;
5. :meth:`~TrialRunner.measure`: the backend launches the server; once it is ready the trial is read
   back once more (:meth:`~TrialRunner._look_before_suite`: failed as dead by another worker while
   this one stood still during the load, it steps aside, nothing measured); the backend then
   measures in the study's staged order; after each stage
   :class:`tuner.engine.pruning.StageJudge` records the partial estimates and stops the suite once
   the front dominates them beyond the noise (the trial is PRUNED); from the backend's ``record``
   callback, before the server stops, the measurement is journaled, its figures stored, its files
   written and the trial told (:mod:`tuner.engine.finish`: figures before files, nothing lost). A
   verdict of too fast over the baseline is journaled and held instead, and decided once the server
   stopped, against the baseline measured again (:meth:`~TrialRunner._rejudge`, :mod:`tuner.engine.suspect`).

A setting pruned before is never launched again: a later proposal of it is told PRUNED at once
(``pruned_from``), costs no launch, and is never taken as a measurement of the setting.

A trial the database forgets before its launch (a commit it acknowledged, then lost: Optuna's
``KeyError: 'Record does not exist.'`` from the next write, and the trial read back is not there) is
given up and the sampler asked again (:data:`~tuner.engine.workers.ASK_TRIES` in all); from its
launch on, its measurement is re-homed as a new trial by the finish (:mod:`tuner.engine.finish`).

Ctrl-C or a crash of the tuner during a measurement (or a Ctrl-C, SIGTERM, between the ask and
the launch): the backend stops the server, the trial is failed and its parameters queued again
(:func:`tuner.engine.requeue.requeue`: the setting, none of the dead trial's attributes), and the
exception propagates. A storage that stays unreachable past
the patience (:class:`tuner.engine.patience.StorageUnavailable`) propagates the same way, without
another storage call: the measurement waits in the journal. ``TUNER_TEST_KILL_AT`` kills the worker
at the named points of :mod:`tuner.engine.killpoints` (tests only).

Why one module of over 400 lines: it is one class, :class:`TrialRunner`, whose steps share one
trial's state (its claim, its budget slot, its verdict); split, each step would reach into the others.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass
from typing import Callable

from ..bench.open_files import TunerOutOfFiles
from ..config.space import SearchSpace
from ..config.study import StudyConfig
from ..server.signals import signals_held
from ..sglang.rules import Resolution, SpecConfig
from .asktell import utc_now
from .baseline import Baseline, BaselineError, baseline_values
from .measurement import ServerOutOfThreads, WorkdirUnwritable
from .finish import apply_finish, finish_of, journal_finish, record_finish, write_files
from .interrupted import release_interrupted
from .journal import Journal
from .killpoints import kill_point
from .limits import extra_constraints
from .objectives import worst_values
from .outcome import FAILURE_KEYS, baseline_attrs, is_figure, judge_measurement, measurement_attrs
from .patience import StorageUnavailable, fail_fast, storage_error, unreachable_now
from .pruning import STAGES_ATTR, StageJudge, baseline_stage_attrs, pruned_attrs
from .records import (CONSTRAINT, FAILED, INTERRUPTED, INVALID, MEASURED, PRUNED, PRUNED_FROM, REUSED,
                      launched, load_records, spec_from_params, spec_key)
from .requeue import requeue
from .stall import STALLS_IN_A_ROW, StallWatch, TunerKeepsStalling, TunerStalled
from .storage import HEARTBEAT_GRACE_S, storage_label
from .suspect import judged_again_note, still_too_fast
from .study import StudyReplaced, study_replaced, study_uid
from .verify import longest_outside_wait_s
from .workers import (ASK_TRIES, TakenBeforeSuite, Worker, fail_running, interrupt, lost_commit_causes,
                      reap_dead_trials, start_trial, trial_lost, try_claim, wait_for_claim)

#: status of a trial that stepped back because another worker took the study's last budget slot,
#: or was measuring the setting the default sampler proposed (:meth:`TrialRunner._reuse_or_claim`)
ABANDONED = "abandoned"
#: what :meth:`TrialRunner.run_one` returns for a proposal of a setting pruned before (no launch)
PRUNED_BEFORE = "pruned_before"
#: what :meth:`TrialRunner.run_one` returns when the tuner stood still during the suite
#: (:class:`tuner.engine.stall.TunerStalled`): the trial failed as interrupted, its setting queued again
STALLED = "stalled"
#: trial system attribute: the sampler asks to measure this (already measured) setting again
REMEASURE_ATTR = "tuner:remeasure"
#: trial system attribute: why the default sampler proposed this setting (set by its own choice,
#: not on a queued seed or retry)
PROPOSAL_ATTR = "tuner:proposal"
#: the claim key suffix of a re-measurement (a claim of its own: the first measurement is done)
AGAIN = "#again"

#: Set on the exception that stopped a trial (Ctrl-C's, SIGTERM's ``SystemExit``) when the trial
#: was left RUNNING, not failed and queued here, its storage away (:func:`unreachable_now`): the
#: trial's number, for the run's last line (tuner/cli/study.py). The next worker's reaper fails it
#: and queues its setting (QA, qa154: the line said "a trial that was running is queued again").
LEFT_RUNNING = "tuner_left_running"

Event = Callable[[str, dict], None]
#: ``suspect(judged, trial number)``: the baseline to judge a too-fast trial against again, or None
#: (:func:`tuner.engine.suspect.baseline_to_rejudge`; the study runner's, which measures it)
Suspect = Callable[[Baseline, int], "Baseline | None"]


@dataclass
class Held:
    """A trial's too-fast verdict, journaled before its server stopped and decided after
    (:meth:`TrialRunner._rejudge`): the ``finish`` it would store, the measurement ``m``, and the
    journal ``entry`` (None when not journaled)."""

    finish: object
    m: object
    entry: object
    checked: bool = True  #: the study was checked before the entry (else it is checked before the store)


def _why_interrupted(exc: BaseException) -> str:
    """The note of a trial queued again because of ``exc``: the disk's or the tuner's own limit, not the
    setting's fault, or a stop."""
    if isinstance(exc, WorkdirUnwritable):
        return f"its launch could not write the workdir ({exc.args[0].partition('; ')[0]})"
    if isinstance(exc, TunerOutOfFiles):
        return exc.args[0].partition("; ")[0]  # "the tuner could not open a file ...: its limit ..."
    if isinstance(exc, ServerOutOfThreads):
        return exc.args[0].partition("; no setting")[0]  # "the server could not start a thread (...): ..."
    return "the tuner was stopped during this trial"


def _left_running(exc: BaseException, trial) -> None:
    """Mark ``exc`` (:data:`LEFT_RUNNING`) with ``trial``'s number."""
    try:
        setattr(exc, LEFT_RUNNING, trial.number)
    except Exception:  # noqa: BLE001 - an exception type that takes no attribute: the line is vaguer
        pass


class TrialRunner:
    """Runs this worker's trials of one study; see the module docstring for the steps."""

    def __init__(self, config: StudyConfig, study, space: SearchSpace, backend, worker: Worker, emit: Event):
        self.config, self.study, self.space, self.backend = config, study, space, backend
        self.worker, self.emit = worker, emit
        self.storage = study._storage
        # A storage in memory (benchmarks) outlives nothing: it gets no journal.
        self.workdir = config.workdir or f"studies/{config.name}"
        self.journal = Journal(self.workdir) if storage_label(self.storage) else None
        #: the study's id, in every journal entry (given now to a study created before ids existed)
        self.uid = study_uid(study) if self.journal is not None else None
        #: the status the last measured trial was told with (measured, failed, pruned), None before
        self.told: str | None = None
        #: trial measurements in a row during which this process stood still (:data:`STALLS_IN_A_ROW`)
        self.stalls = 0
        #: the current trial has reached its launch (a loss of it from then on is re-homed, not asked again)
        self.measuring = False
        self.durations: list[float] = []  #: wall seconds of every measurement this worker made
        #: ``(seconds, whole)`` of every measurement: modelled seconds on backend model, else wall
        self.spent: list[tuple[float, bool]] = []
        #: set by the study runner: a too-fast trial's baseline is suspected first (tuner.engine.suspect);
        #: None: such a trial fails at once (a caller that cannot measure the baseline again)
        self.suspect: Suspect | None = None
        #: the current trial's too-fast verdict, held until its server stops (:meth:`_rejudge`)
        self.held: Held | None = None

    # -- counting -------------------------------------------------------------------------------
    def budget(self) -> int | None:
        """The study's launch budget as stored now: another command may have raised it meanwhile
        (``run --add-trials``, a study file with a larger ``budget.n_trials``)."""
        from .study import stored_budget

        return stored_budget(self.study, self.config.budget.n_trials)

    def launched_in_study(self, records=None) -> int:
        """Finished launches of the whole study (measured or failed), by every worker. A launch
        killed before it finished is not counted (its setting is queued again); nor is a trial
        that is not COMPLETE, whatever its attributes say (:func:`~tuner.engine.records.trial_status`)."""
        records = load_records(self.study) if records is None else records
        return sum(1 for r in records if launched(r.status, r.attrs))

    def check_study(self) -> None:
        """:class:`~tuner.engine.study.StudyReplaced` when this worker's study was deleted (and
        perhaps made anew under its name) since it opened it: nothing more is written through it."""
        if study_replaced(self.study, self.uid):
            raise StudyReplaced(self.study.study_name)

    # -- one trial ------------------------------------------------------------------------------
    def run_one(self, baseline: Baseline) -> str:
        """Ask for one trial and take it to its end; returns its status (or :data:`ABANDONED`)."""
        from optuna.exceptions import UpdateFinishedTrialError

        self.check_study()
        reap_dead_trials(self.study)
        for attempt in range(1, ASK_TRIES + 1):
            self.measuring = False
            with ExitStack() as stack:
                # Beat from the first moment, and named before a Ctrl-C may land: a worker that dies
                # before either would leave a trial (and its claim) nobody could tell was dead.
                # start_trial holds a Ctrl-C that lands while the sampler proposes; held on to here,
                # it is raised inside the try below, where the trial is this worker's to fail and
                # queue (raised as start_trial returned, it left the trial RUNNING: QA, qa114).
                with ExitStack() as asking:
                    asking.enter_context(signals_held())
                    trial = start_trial(self.study, self.worker, stack, self.space.distributions())
                    held = asking.pop_all()
                try:
                    held.close()  # a Ctrl-C held since the ask is raised here
                    kill_point("asked")
                    return self._run(trial, baseline)
                except UpdateFinishedTrialError:
                    # Finished under this worker before its launch: another worker's reaper judged it
                    # dead (paused, or cut off, past the heartbeat grace: QA, qa111, SIGSTOP between its
                    # ask and its launch ended the worker with this error) and queued its setting.
                    if self.measuring or not self._taken_before_launch(trial):
                        raise
                    return ABANDONED
                except KeyError:
                    # Optuna's "Record does not exist." before the launch: the database forgot the
                    # trial (read back: a real loss, not a transient error). Nothing was measured;
                    # the sampler is asked again. A study deleted under the worker says so instead.
                    lost = not self.measuring and trial_lost(self.storage, trial._trial_id, trial.number)
                    if not lost or attempt == ASK_TRIES:
                        raise
                except (KeyboardInterrupt, SystemExit) as exc:
                    # Ctrl-C or SIGTERM between the ask and the launch (the sampler's trial claimed,
                    # counted, read back; no server yet): failed and queued again here, as during a
                    # measurement (_measure_trial), before the run exits saying so. It used to stay
                    # RUNNING for the next run's reaper (QA, qa114: Ctrl-C just after the baseline).
                    release_interrupted()  # a statement it cut short holds SQLite's lock (interrupted.py)
                    if not self.measuring:  # else _measure_trial decided
                        if unreachable_now(self.storage):
                            _left_running(exc, trial)
                        else:
                            self._interrupt(trial, "the tuner was stopped before this trial's launch")
                    raise
            self.check_study()
            lost = lost_commit_causes(self.storage)
            self.emit("warning", {"trial": trial.number, "message": "the storage lost this trial before its "
                                  f"launch (a commit it acknowledged, then forgot: {lost}); another trial is "
                                  "asked for"})
        raise AssertionError("unreachable")  # the last try returns or raises

    def _run(self, trial, baseline: Baseline) -> str:
        requested = spec_from_params(trial.params)
        trial.set_user_attr("requested", requested.as_dict())
        res = self._resolve(trial, requested)
        if res is None:
            return INVALID
        eff = res.effective
        system = self.storage.get_trial_system_attrs(trial._trial_id)
        again = bool(system.get(REMEASURE_ATTR))
        proposed = PROPOSAL_ATTR in system and "fixed_params" not in system
        for _ in range(ASK_TRIES):
            taken = self._reuse_or_claim(trial, eff, again, proposed)
            if taken != "claimed":
                return taken
            if not self._budget_allows(trial):
                return self._abandon(trial, queued_again=True)
            held = self._still_ours(trial)
            if held is None:
                return ABANDONED
            if held:
                break
            # Its claim or mark forgotten: another worker may have claimed or measured the setting,
            # or taken the last budget slot, since.
            trial.set_user_attr("launching", False)
            lost = lost_commit_causes(self.storage)
            self.emit("warning", {"trial": trial.number, "message": "the storage forgot this trial's claim on "
                                  f"{eff.label()} or its launching mark (a commit it acknowledged, then "
                                  f"lost: {lost}); claimed and counted again"})
        else:  # forgotten at every try: a storage this unsteady gets no launch from this trial
            return self._abandon(trial, queued_again=True)
        self.emit("trial_start", {"trial": trial.number, "spec": eff.label(), "requested": requested.label()})
        self.told = None
        self.measuring = True  # from here a lost trial's measurement is re-homed (tuner.engine.finish)
        self.held = None
        try:
            m = self._measure_trial(trial, eff, baseline)
        except TakenBeforeSuite as exc:
            self.emit("warning", {"trial": trial.number, "message": str(exc)})
            return ABANDONED
        if m is None:
            return STALLED
        self.stalls = 0
        if self.held is not None:
            return self._rejudge(trial, eff, baseline)
        # The verdict stored, not the backend's: figures that cannot be true (outcome.speedup_problem)
        # or cannot be compared fail a measurement the server completed.
        if self.told:
            return self.told
        return FAILED if m.failure_class else (PRUNED if m.stopped_after else MEASURED)

    def _resolve(self, trial, requested: SpecConfig) -> Resolution | None:
        """SGLang's rules: the resolution, or None when the setting was recorded invalid."""
        res = self.space.resolve(requested)
        if not res.ok:
            v = res.violation
            self._finish(trial, INVALID, None, {
                "effective": res.effective.as_dict() if res.effective else None,
                "failure_class": f"rule:{v.rule}", "failure_message": v.message,
                "sglang_error": f"{v.sglang_exception}: {v.sglang_message}".rstrip(": "),
            })
            self.emit("trial_skip", {"trial": trial.number, "spec": requested.label(), "why": f"invalid ({v.rule})"})
            return None
        eff = res.effective
        trial.set_user_attr("effective", eff.as_dict())
        trial.set_user_attr("effective_key", spec_key(eff))
        trial.set_user_attr("rewritten", res.rewritten)
        return res

    def _reuse_or_claim(self, trial, eff: SpecConfig, again: bool = False, proposed: bool = False) -> str:
        """:data:`REUSED` when the effective setting was measured (the trial is told),
        :data:`PRUNED_BEFORE` when it was pruned (told PRUNED, no launch), else claim it for this
        trial, waiting while another worker measures it; returns ``"claimed"``.

        ``again`` (a deliberate re-measurement): a setting measured before is claimed under its own
        key and measured once more; another worker measuring or re-measuring it now makes this
        trial a reuse instead (no wait: the sampler decides afresh with that result).
        ``proposed`` (the default sampler's own choice, :data:`PROPOSAL_ATTR`): another worker
        measuring it now makes this trial step aside, :data:`ABANDONED`, instead of a wait as long
        as a launch. Two workers asking at once both choose the best move, each before the other's
        trial shows its setting; asked again, the sampler sees that setting busy and moves on."""
        key = spec_key(eff)
        if again:
            prior = self._prior_measurement(key, trial.number)
            if prior is not None and prior.status == MEASURED:
                if not self._claimed_by_other(key, trial.number) and try_claim(self.study, trial, key + AGAIN):
                    trial.set_user_attr("remeasure_of", prior.number)
                    return "claimed"
                again = False
        while True:
            prior = self._prior_measurement(key, trial.number)
            if prior is not None and prior.status == PRUNED:
                first = prior.attrs.get(PRUNED_FROM, prior.number)
                self._finish(trial, PRUNED, None, {PRUNED_FROM: first, "pruned_at": prior.attrs.get("pruned_at")},
                             pruned=True)
                self.emit("trial_skip", {"trial": trial.number, "spec": eff.label(), "why": f"pruned in trial {first}"})
                return PRUNED_BEFORE
            if prior is not None:
                self._finish(trial, REUSED, prior.values, {"reused_from": prior.number,
                             **{k: v for k, v in prior.attrs.items() if is_figure(k) or k in FAILURE_KEYS}},
                             feasible=prior.status == MEASURED and prior.values is not None)
                self.emit("trial_skip", {"trial": trial.number, "spec": eff.label(),
                                         "why": f"same as trial {prior.number}"})
                return REUSED
            if try_claim(self.study, trial, key):
                # A worker that finished this config between our look and our claim has left its
                # result in storage before its claim went away: look once more, holding the claim.
                if self._prior_measurement(key, trial.number) is None:
                    kill_point("claimed")
                    return "claimed"
                trial.set_user_attr("claim", None)
                continue
            if proposed and self._claimed_by_other(key, trial.number):
                self.emit("trial_skip", {"trial": trial.number, "spec": eff.label(),
                                         "why": "another worker is measuring it; the sampler is asked again"})
                trial.set_user_attr("stepped_aside", True)  # not a budget slot given up
                return self._abandon(trial)
            self.emit("waiting", {"trial": trial.number, "for": f"another worker measuring {eff.label()}"})
            wait_for_claim(self.study, key)

    def _budget_allows(self, trial) -> bool:
        """Whether this trial may launch within the study's total budget, with other workers about.

        Mark, then count: the trial announces it is launching before it counts finished launches
        and the other announced ones. Of two racing workers at least one sees the other, so the
        budget is never exceeded (at worst both step back and ask again).
        """
        from optuna.trial import TrialState

        budget = self.budget()
        if budget is None:
            return True
        trial.set_user_attr("launching", True)
        kill_point("launching")
        running = self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        in_flight = sum(1 for t in running if t.number != trial.number and t.user_attrs.get("launching"))
        return self.launched_in_study() + in_flight < budget

    def _still_ours(self, trial) -> bool | None:
        """Right before the launch, whether ``trial`` is, in the database itself (not Optuna's
        cache), still RUNNING and this worker's (unnamed: named again), holding its claim and its
        ``launching`` mark: True; either gone (False), the caller claims, marks and counts again
        (another worker found the setting unclaimed, or the budget's last slot free, meanwhile: QA,
        one setting launched twice at once; a study one launch past its budget).

        Optuna starts a queued trial with one UPDATE; a database that acknowledged it and then forgot
        it (:func:`~tuner.engine.workers.lost_commit_causes`) holds the trial WAITING while this
        worker runs it, and a second worker may start it from the queue and launch it too (QA: one
        queued setting launched twice). Back in the queue, started by another worker, or finished
        (failed as dead meanwhile): None, and the trial is left as it is, not written to (the queue or
        the other worker has it); the caller steps aside, saying why (:meth:`_gone_why`)."""
        from optuna.trial import TrialState

        held = getattr(self.storage, "_backend", self.storage).get_trial(trial._trial_id)
        named = held.user_attrs.get("worker")
        if held.state == TrialState.RUNNING and named in (None, self.worker.as_dict()):
            if named is None:  # its name was the commit lost: a RUNNING trial nobody else could start
                trial.set_user_attr("worker", self.worker.as_dict())
            # the claim and the launching mark keep the other workers off the setting and the slot
            # (a study with no budget marks nothing)
            mine = trial.user_attrs
            return all(held.user_attrs.get(k) == mine.get(k) for k in ("claim", "launching"))
        self.emit("warning", {"trial": trial.number,
                              "message": f"{self._gone_why(held)}; this worker stepped aside"})
        return None

    def _taken_before_launch(self, trial) -> bool:
        """Whether ``trial``, which this worker had not launched yet, was finished by another process
        (read back from the database): then it is left as it is, and the worker says why it steps
        aside (:meth:`_gone_why`). The setting is the reaper's to queue
        (:func:`~tuner.engine.workers.interrupt`): nothing is queued or written here."""
        from optuna.trial import TrialState

        try:
            held = getattr(self.storage, "_backend", self.storage).get_trial(trial._trial_id)
        except KeyError:
            return False  # gone from the storage: not this case (the caller raises)
        if held.state == TrialState.RUNNING:
            return False
        self.emit("warning", {"trial": trial.number,
                              "message": f"{self._gone_why(held)}; this worker stepped aside"})
        return True

    def _look_before_suite(self, trial) -> None:
        """As the server of ``trial`` is ready, before its first request: raise
        :class:`TakenBeforeSuite` when the database no longer holds the trial RUNNING and this
        worker's (failed as dead by another worker's reaper while this process, or its whole node,
        stood still during the server's load; a start the database forgot), saying why
        (:meth:`_gone_why`). The stall watch spares a pause during the load (it distorts no figure:
        :meth:`tuner.engine.stall.StallWatch.suite_events`), so without this look the woken worker
        measured the whole suite of a setting the reaper had queued again, at the same time as the
        worker measuring the retry and past the study's budget, and stored it as a new trial (QA,
        qa223: two workers on one PostgreSQL study, one SIGSTOPped with its server during the load).
        Nothing was measured yet, so stepping aside loses nothing. The baseline's trial alike: it
        measured the baseline the other worker measured meanwhile, and stored it as the study's (the
        one begun last). A storage away or a trial gone from it decides nothing here: the suite
        runs, and the finish journals and re-homes it."""
        from optuna.trial import TrialState

        if unreachable_now(self.storage):
            return
        try:
            with fail_fast():  # the server is ready and waiting: an outage must not hold it up
                held = getattr(self.storage, "_backend", self.storage).get_trial(trial._trial_id)
        except KeyError:
            return
        except Exception as exc:  # noqa: BLE001 - only the storage's errors pass (storage_error)
            if not storage_error(exc):
                raise
            return
        if held.state == TrialState.RUNNING and held.user_attrs.get("worker") in (None, self.worker.as_dict()):
            return
        raise TakenBeforeSuite(f"{self._gone_why(held)}; this worker stepped aside, its server stopped "
                               "before the suite (nothing measured)")

    def _gone_why(self, held) -> str:
        """Why this worker's trial ``held`` (read from the database) is no longer its own, as the
        evidence shows: back in the queue, or another worker's name on it, is the start forgotten (a
        commit acknowledged, then lost: since the take of a queued trial is one conditional UPDATE,
        nothing else puts it there); failed with this worker's name on it is another worker's reaper,
        which judged this one dead (:func:`tuner.engine.workers.reap_dead_trials`), not a loss."""
        from optuna.trial import TrialState

        named = held.user_attrs.get("worker")
        state = held.state.name
        lost = f"a commit it acknowledged, then lost: {lost_commit_causes(self.storage)}"
        if held.state == TrialState.WAITING:
            return f"the storage forgot this trial's start ({lost}): it is back in the queue"
        if named not in (None, self.worker.as_dict()):
            return (f"the storage forgot this trial's start ({lost}): another worker started it"
                    + ("" if state == "RUNNING" else f", and it is {state} now"))
        if held.state != TrialState.FAIL:
            return f"this trial was finished ({state}) by another process meanwhile"
        if named is None:  # a RUNNING trial nobody named is failed once it is old (workers.UNNAMED_AFTER_S)
            return (f"the storage forgot this worker's name on this trial ({lost}): another worker failed it "
                    "as nobody's")
        if held.user_attrs.get("status") == INTERRUPTED:
            # the reaper's check by pid (tuner.engine.workers.Worker.reapable): a host of this name where
            # this process does not run (another machine named alike; containers that share a hostname
            # but not their processes, where a reaper of a tuner older than its PID-namespace check runs)
            return ("another worker failed this trial as dead: on a host of the same name it could not see "
                    "this process (give each worker's host its own name)")
        return (f"another worker failed this trial as dead: this worker's heartbeat was older than the grace "
                f"period ({HEARTBEAT_GRACE_S} s; this process paused, or cut off from the database)")

    def _abandon(self, trial, queued_again: bool = False) -> str:
        """Fail ``trial`` as :data:`ABANDONED`; ``queued_again`` (no budget slot left): a queued
        setting (a seed, a retry) goes back to the queue, for a budget raised later to measure it.

        A trial another worker's reaper failed meanwhile (this worker judged dead: paused past the
        heartbeat grace) is left to it, nothing raised: the reaper queued its setting. The FAIL is
        one conditional UPDATE (:func:`~tuner.engine.workers.fail_running`), and only the worker that
        made it queues the setting; the marks, then queue, then ``tell`` raised
        ``UpdateFinishedTrialError`` out of the worker (tests/engine/test_abandon_after_reaped.py)."""
        from optuna.exceptions import UpdateFinishedTrialError

        try:
            trial.set_user_attr("launching", False)
            trial.set_user_attr("status", ABANDONED)
        except UpdateFinishedTrialError:
            # failed by a reaper, which queued its setting: said so, as before a launch (QA, qa223:
            # a worker of another node frozen past the grace said nothing of this trial at all)
            self._taken_before_launch(trial)
            return ABANDONED
        with signals_held():  # a Ctrl-C must not land between the FAIL and the queue
            if fail_running(self.storage, trial._trial_id):
                frozen = self.storage.get_trial(trial._trial_id)
                if queued_again and "fixed_params" in frozen.system_attrs:
                    requeue(self.study, frozen)
        return ABANDONED

    def _measure_trial(self, trial, eff: SpecConfig, baseline: Baseline):
        try:
            return self.measure(eff, f"trials/{trial.number}", trial, baseline=baseline)
        except (StorageUnavailable, StudyReplaced):
            raise  # nothing more can be written; the measurement, if any, waits in the journal
        except TakenBeforeSuite:
            raise  # another worker's trial now: nothing measured, nothing to write (_run steps aside)
        except TunerStalled as exc:
            # The client stood still, not the server: nothing is recorded, nothing blamed; measured again.
            taken = self._interrupt(trial, str(exc))
            # Stood still past the heartbeat's grace, the trial is another worker's reaper's by now:
            # said so, as at every other step aside (QA, qa223: a worker of another node frozen for
            # 120 s said only "its setting is queued again", of a setting the other had queued and
            # measured meanwhile).
            self.emit("warning", {"trial": trial.number, "message": f"{exc}; its setting is queued again" if taken
                                  is None else f"{exc}; {self._gone_why(taken)}, which queued its setting again"})
            self.stalls += 1
            if self.stalls >= STALLS_IN_A_ROW:  # the node keeps pausing it: the run stops, one line (cli)
                raise TunerKeepsStalling("trial measurements", exc) from None
            return None
        except BaseException as exc:
            # Ctrl-C, a disk that refuses the launch's files, or a crash of the tuner itself: the server
            # is stopped by the backend; the trial goes back to the queue with its parameters alone.
            release_interrupted()  # a statement it cut short holds SQLite's lock (interrupted.py)
            if unreachable_now(self.storage):
                _left_running(exc, trial)
                raise  # Ctrl-C while the storage is away: the next worker reaps and queues it
            if self.held is not None:  # measured, its verdict held: stored as it stands, nothing lost
                self._store_held(trial, eff, baseline)
                raise
            self._interrupt(trial, _why_interrupted(exc))
            raise

    def _rejudge(self, trial, eff: SpecConfig, baseline: Baseline) -> str:
        """Decide a too-fast verdict held until the trial's server stopped (:mod:`tuner.engine.suspect`):
        the measurement judged again in full against the baseline ``self.suspect`` gives (measured
        again, or another begun since), stored as that verdict; with none, the held verdict is stored,
        its message saying why. Returns the status told."""
        held = self.held
        why_not = None
        try:
            again = self.suspect(baseline, trial.number)
        except BaselineError as exc:  # the baseline measured again failed: the verdict stands, saying so
            again, why_not = None, f"the baseline measured again failed ({exc})"
            self.emit("warning", {"trial": "baseline", "message": f"{exc}; the study's baseline stays trial "
                                  f"{baseline.trial_number}"})
        except BaseException:
            release_interrupted()  # a statement it cut short holds SQLite's lock (interrupted.py)
            if not unreachable_now(self.storage):
                self._store_held(trial, eff, baseline)  # nothing measured lost: the verdict as it stood
            raise
        if again is None:
            finish = held.finish
            finish.user_attrs["failure_message"] += judged_again_note(baseline, why_not)
        else:
            m = held.m
            verdict = judge_measurement(m, eff, self.config.objectives, again.figures, self.config, again.attrs,
                                        way_on=still_too_fast(baseline, again))
            attrs = {**verdict.attrs, "judged_again_against": again.trial_number,
                     "suspected_baseline": baseline.trial_number}
            finish = self._finish_of(trial, verdict.status, verdict.values, attrs,
                                     feasible=verdict.status == MEASURED, measured=True)
            if STAGES_ATTR in held.finish.user_attrs:
                finish.user_attrs[STAGES_ATTR] = held.finish.user_attrs[STAGES_ATTR]
            self.emit("warning", {"trial": trial.number, "message": (
                f"judged again against baseline trial {again.trial_number}: {verdict.status}"
                + (f" ({verdict.attrs.get('failure_class')})" if verdict.status != MEASURED else ""))})
        self._store_held(trial, eff, baseline, finish, check=True)
        return self.told

    def _store_held(self, trial, eff: SpecConfig, baseline: Baseline, finish=None, check: bool = False) -> None:
        """Store ``finish`` (default: the held verdict as it stands) in place of the held one; ``check``:
        the study checked before the first write when it was not before the entry (the storage away)."""
        held, self.held = self.held, None
        self._record(self.study, trial, finish or held.finish, held.m, eff, "", baseline, held=held.entry,
                     before_store=None if held.checked or not check else self.check_study)

    def _interrupt(self, trial, why: str):
        """Fail the RUNNING ``trial`` as interrupted (``why`` in its note) and queue its setting
        again, a Ctrl-C held between the two writes; nothing when it finished meanwhile or is no
        longer in the storage. Returns the trial as the database holds it when another worker's
        reaper failed it first (read back: :meth:`_gone_why` says why), else None."""
        from optuna.trial import TrialState

        with signals_held():  # another Ctrl-C must not land between the FAIL and the retry
            try:
                frozen = self.storage.get_trial(trial._trial_id)
            except KeyError:  # gone from the storage (an SQLite file put back from an older copy)
                return None
            if frozen.state == TrialState.RUNNING and interrupt(self.study, trial._trial_id, why):
                return None
            # a reaper's FAIL first: its to queue (read from the database, not this process's cache)
            held = getattr(self.storage, "_backend", self.storage).get_trial(trial._trial_id)
            return held if held.state == TrialState.FAIL else None

    def _claimed_by_other(self, key: str, number: int) -> bool:
        from optuna.trial import TrialState

        running = self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        return any(t.number != number and t.user_attrs.get("claim") in (key, key + AGAIN) for t in running)

    def _prior_measurement(self, key: str, number: int):
        """The finished measurement (measured or failed, with its values) of ``key``, else the trial
        that pruned it: a whole one first, even after a prune (a killed worker's, replayed later)."""
        mine = [r for r in load_records(self.study) if r.number != number and r.attrs.get("effective_key") == key]
        whole = [r for r in mine if r.status in (MEASURED, FAILED) and r.values is not None]
        return next(iter(whole or [r for r in mine if r.status == PRUNED]), None)

    # -- measuring and telling ------------------------------------------------------------------
    def measure(self, spec: SpecConfig | None, label: str, trial, baseline: Baseline | None = None,
                study=None):
        """Measure through the backend; the result is in storage before the server stops.

        ``baseline=None`` measures the baseline trial of ``study`` (its figures are told as the
        baseline study's values, or it fails); otherwise the trial is judged against ``baseline``
        after every stage (pruned when decided) and at the end.
        """
        study = study or self.study
        kind = "baseline." if baseline is None else ""
        judge = None if baseline is None else StageJudge(
            self.config, study, trial, baseline.attrs, getattr(self.backend, "plan", []), self.emit,
            remeasure=trial.user_attrs.get("remeasure_of") is not None,
            replaced=lambda: study_replaced(self.study, self.uid))

        watch = StallWatch()
        # The baseline study's metric names are read now, before the suite: a storage call in
        # record() before the journal entry waits out an outage with the measurement in neither
        # (QA, qa148: PostgreSQL stopped during the baseline's suite, exit 75 with "nothing measured
        # is waiting"; the baseline was lost and measured again).
        names = list(study.metric_names or []) if baseline is None else None

        def record(m) -> None:
            kill_point(f"{kind}measured")
            # the tuner paused during the suite: not the server's figures (TunerStalled)
            watch.check(longest_outside_wait_s(m.to_save))
            # deleted meanwhile: its trial's id may be another study's now. An outage must not keep
            # the measurement from the journal: then the finish waits for the storage as before
            # (and a storage that refuses this worker: the finish meets it after the journal; QA)
            # Not tried on a storage already known away (unreachable_now), as the pruning judge skips
            # it (pruning.py): inside fail_fast it cannot wait, but a new connection to a frozen
            # PostgreSQL still cost the connect timeout (10 s) before the journal entry (QA, qa154);
            # the finish meets a replaced study once the storage answers (StudyReplaced there).
            checked = False
            if not unreachable_now(self.storage):
                with fail_fast():
                    try:
                        self.check_study()
                        checked = True
                    except Exception as exc:  # noqa: BLE001 - only the storage's errors pass (storage_error)
                        if not storage_error(exc):
                            raise
            pruned = False
            if baseline is None:
                attrs = {**baseline_attrs(m, self.config), **baseline_stage_attrs(m.figures),
                         "finished_at": utc_now()}
                if not m.failure_class:
                    attrs["status"] = MEASURED
                values = None if m.failure_class else baseline_values(study, attrs, names)
                finish = finish_of(study, trial, attrs, values, {}, measured=values is not None)
            else:
                attrs = measurement_attrs(m, spec)
                # pruned, unless it failed or the server ran another setting (then judged as failed)
                pruned = bool(m.stopped_after and not m.failure_class and not attrs.get("args_mismatch"))
                if pruned:
                    finish = self._finish_of(trial, PRUNED, None, pruned_attrs(attrs, m.stopped_after, judge.verdict),
                                             feasible=False, measured=True, pruned=True)
                else:
                    verdict = judge_measurement(m, spec, self.config.objectives, baseline.figures, self.config,
                                                baseline.attrs)
                    finish = self._finish_of(trial, verdict.status, verdict.values, verdict.attrs,
                                             feasible=verdict.status == MEASURED, measured=True)
                if judge.stages:  # also those the judge could not store during a storage outage
                    finish.user_attrs[STAGES_ATTR] = judge.stages
                if not pruned and verdict.too_fast and self.suspect is not None:
                    # The baseline is suspected first (tuner.engine.suspect): the verdict is journaled
                    # now, before the server stops, and decided once it has (_rejudge)
                    warnings, entry = journal_finish(finish, journal=self.journal, suite=self._suite(m),
                                                     file_paths=self._file_paths(m),
                                                     storage=storage_label(self.storage), uid=self.uid)
                    for warning in warnings:
                        self.emit("warning", {"trial": trial.number, "message": warning})
                    self.held = Held(finish, m, entry, checked)
                    return
            # Not checked above (the storage away): checked once it answers, after the journal entry
            # and before the first write. An SQLite file moved away during the suite and the study
            # created anew in its place meanwhile: the finish, retried until the file was back, stored
            # the measurement into the new study, its figures judged against the deleted study's
            # baseline, as a re-homed trial (QA, qa205); now StudyReplaced, the entry kept in the
            # journal (the new study's next run sets it aside).
            self._record(study, trial, finish, m, spec, kind, baseline, pruned, judge,
                         before_store=None if checked else self.check_study)

        def before_suite(kind: str, data: dict) -> None:
            if kind == "phase" and isinstance(data, dict) and data.get("phase") == "benchmark":
                self._look_before_suite(trial)
            self.emit(kind, data)

        with watch:
            m = self.backend.measure(spec, label, record, on_event=watch.suite_events(before_suite), on_stage=judge)
        self.durations.append(m.duration_s)
        modelled = getattr(m, "model_duration_s", None)
        whole = not (m.stopped_after or m.failure_class)  # ran the whole suite (a failure may cost a load only)
        self.spent.append((m.duration_s if modelled is None else modelled, whole))
        return m

    @staticmethod
    def _suite(m) -> dict | None:
        return m.to_save.to_dict() if hasattr(m.to_save, "to_dict") else None

    def _file_paths(self, m) -> dict:
        return {"suite_json": m.result_path, "log": m.log_path, "log_max_mb": self.config.server.log_max_mb}

    def _record(self, study, trial, finish, m, spec, kind: str, baseline: Baseline | None, pruned: bool = False,
                judge=None, held=None, before_store=None) -> None:
        """Store ``finish`` (:func:`tuner.engine.finish.record_finish`) and say so; ``held``: the journal
        entry of the verdict held for it (:meth:`_rejudge`), removed with its own; ``before_store``:
        record_finish's (the study checked before its first write)."""
        recorded = record_finish(
            study, finish, journal=self.journal, suite=self._suite(m), storage=storage_label(self.storage),
            kind=kind, uid=self.uid, held=held, before_store=before_store,
            files=lambda: write_files(study, trial._trial_id, m.to_save, m.result_path, m.log_path,
                                      self.workdir, log_max_mb=self.config.server.log_max_mb),
            file_paths=self._file_paths(m))
        number = "baseline" if baseline is None else trial.number
        for warning in recorded.warnings:
            self.emit("warning", {"trial": number, "message": warning})
        if baseline is None and recorded.rehomed_as is not None:  # as a trial's below (QA: silent)
            self.emit("warning", {"trial": "baseline", "message": (
                f"its measurement is stored as baseline trial {recorded.rehomed_as}: baseline trial "
                f"{trial.number} was failed meanwhile by another worker (no heartbeat from this one "
                "within the grace period), or the storage no longer has it (tuner.engine.finish); the "
                "study's baseline is the measurement begun last (tuner.engine.baseline.find_baseline)")})
        if baseline is not None:
            status = self.told = finish.user_attrs["status"]
            shown = trial.number
            if recorded.rehomed_as is not None:  # its trial failed meanwhile: say where the figures are
                shown = recorded.rehomed_as
                self.emit("warning", {"trial": trial.number, "message": (
                    f"its measurement is stored as trial {shown}: this trial was failed meanwhile by "
                    "another worker (no heartbeat from this one within the grace period), or the "
                    "storage no longer has it (tuner.engine.finish)")})
            done = {"trial": shown, "spec": spec.label(), "status": status,
                    "values": finish.values if status == MEASURED else None,
                    "failure_class": finish.user_attrs.get("failure_class")}
            if pruned:
                done.update(pruned_at=m.stopped_after, pruned_by=judge.verdict.by if judge.verdict else None)
            self.emit("trial_done", done)

    def _finish(self, trial, status: str, values, attrs: dict, feasible: bool = False, pruned: bool = False) -> None:
        """Finish a trial that launched nothing (invalid, reused, a pruned setting proposed again):
        attributes, constraints, tell."""
        apply_finish(self.study, self._finish_of(trial, status, values, attrs, feasible, measured=False,
                                                 pruned=pruned))

    def _finish_of(self, trial, status: str, values, attrs: dict, feasible: bool, measured: bool,
                   pruned: bool = False):
        """The trial's :class:`~tuner.engine.finish.Finish`: its attributes, status and note, the
        constraints (``measured``, then the study's limits), and its values or the placeholders;
        ``pruned``: told PRUNED, with no values (its partial figures are intermediate values)."""
        attrs = {**attrs, "status": status, "finished_at": utc_now()}
        if pruned:
            first = attrs.get(PRUNED_FROM)
            attrs["note"] = (f"pruned after stage {attrs.get('pruned_at')}" + (
                f" (trial {first} pruned this setting; not launched again)" if first is not None else
                f": dominated by trial {attrs.get('pruned_by')} beyond the noise") + "; its partial figures "
                "are intermediate values, not a result")
        elif not feasible:
            # Shown beside the values in optuna-dashboard, which also greys the trial out as
            # infeasible (the constraint): the values are not a result.
            why = attrs.get("failure_class") or status
            attrs["note"] = (f"nothing measured ({status}: {why}); the values are worst-case "
                             "placeholders that steer the sampler away, not results")
        # The study's limits (SLOs, lossless), each by how much it is broken (tuner.engine.limits).
        # Optuna 5 reads the named constraints; optuna-dashboard (0.21) only the older list form,
        # written from the same values (the samplers' sum of violations is doubled for every trial
        # alike, so their order holds). A pruned trial carries the violated ``measured`` constraint
        # too: Optuna's multi-objective TPE then treats it as infeasible and steers away.
        constraints = {CONSTRAINT: -1.0 if feasible else 1.0, **(extra_constraints(attrs) if feasible else {})}
        if pruned:
            return finish_of(self.study, trial, attrs, None, constraints, measured, pruned=True)
        return finish_of(self.study, trial, attrs, values if values is not None else
                         worst_values(self.config.objectives), constraints, measured)
