"""The study engine's entry point: one worker's ask/measure/tell loop over relaunched servers.

One call of :func:`run_study` is one worker. It starts by replaying the measurements a dead worker
of this study left in the local journal (:func:`tuner.engine.finish.replay_journal`; again before it
fails the trial of a worker of this host that died while this one runs), then stops
servers a crashed run on this host left behind and fails trials dead workers left RUNNING, makes
sure the baseline is measured
(:mod:`tuner.engine.baseline`), then runs trials (:mod:`tuner.engine.trial`) until a stop reason
holds: its own ``n_trials``, the study's budget, the space (or the grid sampler's grid) exhausted, the
timeout, or a sampler that keeps proposing nothing new.

Contracts:

* Trial state lives in Optuna storage only, so any worker given the storage URL and study name can
  continue the study (:mod:`tuner.engine.study`).
* Results reach storage before the server stops (the backend calls back before stopping), and a
  finished measurement is journaled locally before anything else (:mod:`tuner.engine.finish`).
* Storage outages are waited out (:mod:`tuner.engine.patience`, when the storage was opened
  patient, as ``tuner study run`` does): past the patience,
  :class:`~tuner.engine.patience.StorageUnavailable` propagates, the server stopped and the
  measurement journaled.
* A trial left RUNNING by a dead worker is failed (Optuna heartbeat, or at once when the worker was
  on this host and its process is gone) and its parameters are queued again.
* Two workers never measure the same effective config at once (claims, :mod:`tuner.engine.workers`).
* Ctrl-C: the signal handler raises at once (:func:`tuner.server.launcher.stop_on_signals`), the
  backend stops the server on the way out (a second Ctrl-C kills its group), the trial is failed
  and queued again, the run raises ``KeyboardInterrupt`` (the CLI exits 130).
* The budget is read from storage before every trial (:func:`tuner.engine.study.stored_budget`): a
  study extended while this worker runs is extended for it too.
* Every trial has a deadline, derived from the baseline's suite time once the baseline is known
  (:mod:`tuner.engine.deadline`); a server past it, or one that stops answering, fails its trial as
  ``hung`` and the run goes on. A baseline that fails (hung included) stops the run
  (:class:`tuner.engine.baseline.BaselineError`).
* A trial faster over the baseline than its accept length allows suspects the baseline first
  (:mod:`tuner.engine.suspect`); a baseline measured again for it that fails does not stop the run.
* Time (``timeout_s``): wall seconds from the start of the run, or, on ``server.backend: model``,
  the modelled GPU seconds of this run's measurements (the baseline's included), so ``8h`` is one
  modelled night. A trial is not started unless a whole-suite measurement (1.1 x the mean of the
  last five that ran to the end; before any trial did, the baseline's) still fits: a trial may need
  the whole suite, pruned or not.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import Callable

from ..config.space import SearchSpace
from ..config.study import StudyConfig
from ..config.wording import counted
from ..server.signals import signals_held
from .baseline import Baseline, ensure_baseline
from .suspect import baseline_to_rejudge, remeasure_reason
from .deadline import apply_trial_deadline
from .finish import replay_journal
from .interrupted import release_interrupted
from .patience import patient_backend, unreachable_now
from .records import FAILED, INVALID, MEASURED, PRUNED, REUSED, finite_number, load_records, spec_key
from .study import config_from_study, open_study
from .trial import ABANDONED, PRUNED_BEFORE, STALLED, TrialRunner
from .dead_journals import journal_first
from .workers import Worker, fail_running, reap_dead_trials

#: Proposals in a row that launch nothing (invalid or already measured) before a worker concludes
#: the sampler has nothing new to offer.
MAX_IDLE_PROPOSALS = 200
#: How often a worker waiting for other workers' last launches looks again, in seconds.
SLOT_POLL_S = 2.0
#: How a stop reason for a spent budget starts (the CLI adds how to extend the study).
BUDGET_SPENT = "the study's budget"

Event = Callable[[str, dict], None]


def _noop(kind: str, info: dict) -> None:
    pass


@dataclass
class RunSummary:
    measured: int = 0  #: servers launched and measured by this worker
    failed: int = 0  #: servers launched by this worker that measured nothing (failed, hung, args mismatch...)
    pruned: int = 0  #: servers launched and stopped early, their result decided (tuner.engine.pruning)
    invalid: int = 0
    reused: int = 0  #: proposals that repeated a measured (or pruned) setting: no launch
    stopped_because: str = ""

    @property
    def launches(self) -> int:
        """Servers this worker launched (what ``n_trials`` counts)."""
        return self.measured + self.failed + self.pruned


def make_sampler(config: StudyConfig, space: SearchSpace, n_existing: int, listed=None):
    """The configured sampler with this worker's own seed (see :mod:`tuner.engine.sampling`);
    ``listed``: the settings a landscape table holds (None: every setting of the space).

    With a seed in the study file, the worker's seed is that plus the number of trials already in
    the study: a fresh study is reproducible, and a restarted worker does not replay the crash.
    """
    from .sampling import make_sampler as _make

    seed = config.sampler.seed
    # within numpy's seed range (0 to 2**32 - 1), which Optuna's samplers hand their seed to
    seed = random.SystemRandom().randrange(2**31) if seed is None else (seed + n_existing) % 2**32
    return _make(config.sampler, seed, space, listed)


def run_study(config: StudyConfig, storage_url: str, backend, *, n_trials: int | None = None,
              timeout_s: float | None = None, rebaseline: bool = False, on_event: Event = _noop) -> RunSummary:
    """Run one worker until the budget is spent, the time is up or the space is exhausted."""
    import optuna

    from .study import ensure_metric_names
    from .unreadable_trials import fail_unreadable_trials

    study = open_study(config.name, storage_url, patient=True, on_outage=on_event)
    _, space, _ = config_from_study(study)
    ensure_metric_names(study)  # studies created before the dashboard's names existed
    for number, note in fail_unreadable_trials(study):  # no sampler reads past one (unreadable_trials.py)
        on_event("warning", {"trial": number, "message": note})
    # a landscape table's grid (tuner.engine.model_backend.ModelBackend.listed): the default sampler
    # proposes only the settings it lists (QA, qa131: on a grid of 44 rows measured on a node, nearly
    # every proposal was a setting the table never measured, each a failed launch)
    sampler = make_sampler(config, space, len(study.get_trials(deepcopy=False)), getattr(backend, "listed", None))
    study = optuna.load_study(study_name=config.name, storage=study._storage, sampler=sampler)
    runner = _Runner(config, study, space, backend, on_event)
    return runner.run(n_trials=n_trials, timeout_s=timeout_s, rebaseline=rebaseline)


class _Runner:
    """One worker's loop: start up, baseline, then trials until :meth:`_stop_reason` says stop."""

    def __init__(self, config: StudyConfig, study, space: SearchSpace, backend, on_event: Event):
        self.config, self.study, self.backend, self.emit = config, study, backend, on_event
        self.worker = Worker()
        self.trials = TrialRunner(config, study, space, backend, self.worker, on_event)
        self.n_configs = len(space.effective_configs())
        # a landscape table's grid (ModelBackend.listed): the run ends once each of its settings in the
        # space was tried, as a space's does (QA, qa133: an exhausted grid of three rows went on through
        # 200 proposals told `reused`, the study's status a page of them)
        listed = getattr(backend, "listed", None)
        self.grid = None if listed is None else {spec_key(s) for s in space.effective_configs() if s in listed}
        self._modelled = config.server.backend == "model"  #: time is modelled GPU time
        self.deadline: float | None = None  #: seconds this run may spend (see the module docstring)
        self.baseline: Baseline | None = None  #: what this worker's trials are judged against, once known
        self.baseline_attrs: dict = {}  #: the study's baseline's attributes, once it is known
        #: wall seconds of each launch of this run, ask to tell (the ETA's; on backend model the
        #: measurement's own ``duration_s`` is 0: no server ran)
        self.launch_walls: list[float] = []

    def run(self, n_trials, timeout_s, rebaseline) -> RunSummary:
        # A worker of this host that dies during its tell while this one runs leaves its measurement
        # in the journal: stored before this worker's reaping fails its trial (dead_journals.journal_first).
        with journal_first(self.study._storage, self._replay_journal):
            return self._run(n_trials, timeout_s, rebaseline)

    def _run(self, n_trials, timeout_s, rebaseline) -> RunSummary:
        summary = RunSummary()
        started = self.started = time.monotonic()
        self.deadline = timeout_s
        patient = patient_backend(self.study._storage)
        if patient is not None:
            patient.on_outage = self.emit  # "storage_down" / "storage_back" progress lines
        self._replay_journal()
        self._clean_up_after_the_dead()
        self._use_baseline(self._baseline(rebaseline))
        self.trials.suspect = self._suspect_baseline
        idle, waiting = 0, False
        while True:
            records = load_records(self.study)  # one read of the storage per proposal
            reason = self._stop_reason(records, summary, n_trials, idle)
            if reason:
                summary.stopped_because = reason
                break
            if self._last_slots_in_flight(records):
                # Other workers' launches hold what is left of the budget: wait for them without asking
                # for trials (each ask would be a trial abandoned at once, thousands in a long wait).
                if not waiting:
                    self.emit("waiting", {"for": "the study's last budget slots, held by other workers' launches"})
                waiting = True
                time.sleep(SLOT_POLL_S)
                continue
            waiting = False
            began = time.monotonic()
            outcome = self.trials.run_one(self.baseline)
            if outcome == ABANDONED:
                time.sleep(random.uniform(0.05, 0.5))  # another worker took the last budget slot
                continue
            if outcome == STALLED:  # the tuner stood still during the suite: measured again, not counted
                continue
            if outcome in (MEASURED, FAILED, PRUNED):  # a launch
                summary.measured += outcome == MEASURED
                summary.failed += outcome == FAILED
                summary.pruned += outcome == PRUNED
                idle = 0
                self.launch_walls.append(time.monotonic() - began)
            else:
                idle += 1
                summary.invalid += outcome == INVALID
                summary.reused += outcome in (REUSED, PRUNED_BEFORE)
            self.emit("progress", {"measured": summary.launches,
                                   "n_trials": n_trials or self.trials.budget(),
                                   "elapsed_s": time.monotonic() - started, "eta_s": self._eta(summary, n_trials),
                                   **({"model_elapsed_s": self._elapsed(started)} if self._modelled else {})})
        self.emit("finished", {"summary": summary.__dict__})
        return summary

    # -- the steps ------------------------------------------------------------------------------
    def _replay_journal(self) -> list:
        """Measurements a dead worker of this study journaled but never stored: store them first (at
        the start, and before this worker fails a trial of a dead worker of this host). Returns them."""
        replayed = replay_journal(self.study, self.trials.workdir)
        if replayed:
            self.emit("replayed", {"trials": replayed})
        return replayed

    def _clean_up_after_the_dead(self) -> None:
        """Stop servers a crashed run on this host left behind; fail trials dead workers left RUNNING."""
        stopped = getattr(self.backend, "cleanup_orphans", lambda: [])()
        if stopped:
            self.emit("orphans", {"servers": stopped})
        reaped = reap_dead_trials(self.study)
        if reaped:
            self.emit("reaped", {"trials": reaped})

    def _use_baseline(self, baseline: Baseline) -> None:
        """Judge this worker's trials against ``baseline`` from now on, their deadline derived from it."""
        self.baseline = baseline
        self.baseline_attrs = baseline.attrs or {}
        apply_trial_deadline(self.backend, self.config, baseline.attrs, self.emit)

    def _suspect_baseline(self, judged: Baseline, trial: int) -> Baseline | None:
        """:func:`tuner.engine.suspect.baseline_to_rejudge`, this worker's trials judged by its answer."""
        why = remeasure_reason(trial, judged)

        def remeasure() -> Baseline:
            self.emit("warning", {"trial": trial, "message": f"{why}: the baseline is measured again"})
            return self._baseline(True, newer_than=judged.trial_number, because=why)
        again = baseline_to_rejudge(self.study, judged, remeasure)
        if again is not None and again.trial_number != self.baseline.trial_number:
            self._use_baseline(again)
        return again

    def _baseline(self, rebaseline: bool, newer_than: int | None = None, because: str | None = None) -> Baseline:
        def measure(trial, bstudy):
            # A measurement of its own gets a label of its own: a re-measured baseline (--rebaseline)
            # is "baseline-N" (N: its trial), so the model backend's seeded noise draws anew (the
            # label keys the draw; "baseline" again replayed the first reading) and a server's
            # files go beside the first baseline's; the first one is "baseline", as it always was.
            from optuna.trial import TrialState

            again = any(t.state == TrialState.COMPLETE and t.number < trial.number
                        for t in bstudy.get_trials(deepcopy=False))
            return self.trials.measure(None, f"baseline-{trial.number}" if again else "baseline", trial,
                                       study=bstudy)

        try:
            return ensure_baseline(self.study, self.worker, measure, self.emit, rebaseline,
                                   newer_than=newer_than, because=because)
        except (KeyboardInterrupt, SystemExit):
            release_interrupted()  # a statement it cut short holds SQLite's lock (interrupted.py)
            self._fail_own_baseline_trials()
            raise

    def _fail_own_baseline_trials(self) -> None:
        """Fail this worker's RUNNING baseline trials, on the way out of a Ctrl-C or SIGTERM: nothing
        is left RUNNING by a clean stop, wherever in :func:`ensure_baseline` the signal landed. Its
        own ``try`` fails the trial it measures; a signal held while the trial named its worker and
        raised as ``start_trial`` returned, or one landing in the claim, came before that ``try``, and
        the trial was left RUNNING for the next run's reaper (QA, qa185: 3 of 40 fuzzed runs). The
        baseline is measured again by the next run, as after any interrupted baseline. Skipped while
        the storage is away (the next run reaps the trial)."""
        import optuna
        from optuna.trial import TrialState

        from .study import BASELINE_SUFFIX

        storage = self.study._storage
        if unreachable_now(storage):
            return
        me = self.worker.as_dict()
        with signals_held():  # another signal waits for these writes (it would cut them in two)
            try:
                bstudy = optuna.load_study(study_name=self.study.study_name + BASELINE_SUFFIX, storage=storage)
            except KeyError:
                return  # no baseline study yet: nothing of it runs
            for t in bstudy.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
                if t.user_attrs.get("worker") == me:
                    fail_running(storage, t._trial_id)

    def _stop_reason(self, records, summary: RunSummary, n_trials, idle: int) -> str:
        """Why this worker stops now, or "" to run another trial."""
        total_budget = self.trials.budget()
        if n_trials is not None and summary.launches >= n_trials:
            return f"--n-trials {n_trials} reached"
        if total_budget is not None and self.trials.launched_in_study(records) >= total_budget:
            return f"{BUDGET_SPENT} of {counted(total_budget, 'trial')} is spent"
        if len(_measured_keys(records)) >= self.n_configs:
            return "every valid effective config has been measured"
        if self.grid is not None and self.grid <= _measured_keys(records):
            return "every setting the landscape table lists has been tried"
        if self.deadline is not None and self._elapsed(self.started) + self._expected_duration_s(records) > self.deadline:
            what = "modelled GPU time" if self._modelled else "time"
            return f"the next trial would not finish within the {what} budget (--timeout / budget.timeout)"
        if idle >= MAX_IDLE_PROPOSALS:
            return f"{idle} proposals in a row were invalid or already measured"
        if self._grid_done():
            return "every setting of the grid (sampler.options.search_space) has been tried"
        return ""

    def _grid_done(self) -> bool:
        """The grid sampler's grid finished, and no setting is queued (a crashed trial's, a seed),
        which is measured first: :mod:`tuner.engine.grid`."""
        from optuna.trial import TrialState

        from .grid import StudyGridSampler

        sampler = self.study.sampler
        return (isinstance(sampler, StudyGridSampler) and sampler.done(self.study)
                and not self.study.get_trials(deepcopy=False, states=(TrialState.WAITING,)))

    def _last_slots_in_flight(self, records) -> bool:
        """Whether the launches finished and those other workers have in flight fill the budget: a
        trial asked now could only step back (:data:`~tuner.engine.trial.ABANDONED`). An in-flight
        launch that is interrupted frees its slot again."""
        from optuna.trial import TrialState

        budget = self.trials.budget()
        if budget is None:
            return False
        launched = self.trials.launched_in_study(records)

        def full() -> bool:
            running = self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
            in_flight = sum(1 for t in running if t.user_attrs.get("launching"))
            return in_flight > 0 and launched + in_flight >= budget

        # A dead worker's launch holds no slot; reaped only when it would make this worker wait (a
        # trial asked now reaps anyway, tuner.engine.trial: not twice per proposal).
        return full() and (not reap_dead_trials(self.study) or full())

    # -- estimates ------------------------------------------------------------------------------
    def _elapsed(self, started: float) -> float:
        """Seconds this run has spent: modelled GPU seconds of its measurements on backend model."""
        if self._modelled:
            return sum(s for s, _ in self.trials.spent)
        return time.monotonic() - started

    def _expected_duration_s(self, records) -> float:
        """1.1 x the mean of the last five whole-suite measurements of this run (not pruned, not
        failed: a launch that failed may have cost its load alone); before this run has one (a
        continued study, or launches pruned or failed so far), of the study's stored ones (modelled
        GPU time on backend model, wall time otherwise); before any trial ran the whole suite, the
        baseline's measurement (the same suite on the same server, launch included; a fresh run counts
        it among its own): a continued run must not overrun its budget for want of its own first figure."""
        whole = [s for s, ran_whole in self.trials.spent if ran_whole][-5:]
        key = "model_duration_s" if self._modelled else "duration_s"
        if not whole:
            stored = [r.attrs.get(key) for r in records if r.status == MEASURED]
            whole = [float(v) for v in stored if isinstance(v, (int, float)) and v > 0][-5:]
        if not whole:
            # QA, qa139: a run continued after its baseline alone (a first run stopped by its timeout, or
            # interrupted) judged its first trial by the model load alone: `--timeout 15m` spent 24m51s.
            v = self.baseline_attrs.get(key)
            whole = [float(v)] if finite_number(v) and v > 0 else []
        expected = 1.1 * (sum(whole) / len(whole)) if whole else 0.0
        # no launch takes less than its model load (backend model: known in advance)
        return max(expected, getattr(self.backend, "load_s", 0.0) if self._modelled else 0.0)

    def _eta(self, summary: RunSummary, n_trials) -> float | None:
        """Seconds until this run ends: the launches left (its ``n_trials``, the study's budget, and
        those its ``timeout`` still has room for, at the estimate :meth:`_stop_reason` judges by) times
        the mean wall time of this run's launches; None when nothing bounds the run."""
        total_budget = self.trials.budget()
        durations = self.launch_walls
        records = load_records(self.study)
        left = None
        if n_trials is not None:
            left = n_trials - summary.launches
        if total_budget is not None:
            left_total = total_budget - self.trials.launched_in_study(records)
            left = left_total if left is None else min(left, left_total)
        if self.deadline is not None:
            # QA, qa139: a night of `n_trials: 100, timeout: 8h` showed the ETA of 100 launches, one
            # that stops at its timeout none (ETA ?), though the run stops once the next would not fit
            expected = self._expected_duration_s(records)
            if expected > 0:
                fit = max(0, int((self.deadline - self._elapsed(self.started)) // expected))
                left = fit if left is None else min(left, fit)
        if left is None or not durations:
            return None
        return max(left, 0) * (sum(durations) / len(durations))


def _measured_keys(records) -> set[str]:
    return {r.attrs.get("effective_key") for r in records
            if r.status in (MEASURED, FAILED, PRUNED) and r.attrs.get("effective_key")}
