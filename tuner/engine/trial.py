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
   measurements of one setting (:func:`tuner.engine.records.merge_repeats`);
4. :meth:`~TrialRunner._budget_allows`: the study's launch budget, shared with the other workers;
5. :meth:`~TrialRunner.measure`: the backend measures; the figures and the tell reach storage from
   the backend's ``record`` callback, before the server stops.

Ctrl-C or a crash of the tuner during a measurement: the backend stops the server, the trial is
failed and its parameters queued again, and the exception propagates.
"""

from __future__ import annotations

from typing import Callable

from ..config.space import SearchSpace
from ..config.study import StudyConfig
from ..sglang.rules import Resolution, SpecConfig
from .asktell import ask, tell, utc_now
from .baseline import Baseline
from .limits import extra_constraints
from .objectives import worst_values
from .outcome import FAILURE_KEYS, baseline_attrs, is_figure, judge_measurement
from .records import CONSTRAINT, FAILED, INVALID, MEASURED, REUSED, load_records, spec_from_params, spec_key
from .workers import Heartbeat, Worker, reap_dead_trials, try_claim, wait_for_claim

#: The system attribute optuna-dashboard reads constraints from (Optuna's pre-5 list form).
LEGACY_CONSTRAINTS = "constraints"

#: status of a trial that stepped back because another worker took the study's last budget slot
ABANDONED = "abandoned"
#: trial system attribute: the sampler asks to measure this (already measured) setting again
REMEASURE_ATTR = "tuner:remeasure"
#: the claim key suffix of a re-measurement (a claim of its own: the first measurement is done)
AGAIN = "#again"

Event = Callable[[str, dict], None]


class TrialRunner:
    """Runs this worker's trials of one study; see the module docstring for the steps."""

    def __init__(self, config: StudyConfig, study, space: SearchSpace, backend, worker: Worker, emit: Event):
        self.config, self.study, self.space, self.backend = config, study, space, backend
        self.worker, self.emit = worker, emit
        self.storage = study._storage
        self.durations: list[float] = []  #: wall seconds of every measurement this worker made

    # -- counting -------------------------------------------------------------------------------
    def budget(self) -> int | None:
        """The study's launch budget as stored now: another command may have raised it meanwhile
        (``run --add-trials``, a study file with a larger ``budget.n_trials``)."""
        from .study import stored_budget

        return stored_budget(self.study, self.config.budget.n_trials)

    def launched_in_study(self, records=None) -> int:
        """Launches the whole study has made (measured or failed), by every worker."""
        records = load_records(self.study) if records is None else records
        return sum(1 for r in records if r.status in (MEASURED, FAILED))

    # -- one trial ------------------------------------------------------------------------------
    def run_one(self, baseline: Baseline) -> str:
        """Ask for one trial and take it to its end; returns its status (or :data:`ABANDONED`)."""
        reap_dead_trials(self.study)
        trial = ask(self.study, self.space.distributions())
        # Beat from the first moment: a worker that dies before its first heartbeat would leave a
        # trial (and its claim) that Optuna never calls stale.
        with Heartbeat(self.storage, trial._trial_id):
            return self._run(trial, baseline)

    def _run(self, trial, baseline: Baseline) -> str:
        trial.set_user_attr("worker", self.worker.as_dict())
        trial.set_user_attr("launching", False)  # a retried trial inherits its dead original's attrs
        requested = spec_from_params(trial.params)
        trial.set_user_attr("requested", requested.as_dict())
        res = self._resolve(trial, requested)
        if res is None:
            return INVALID
        eff = res.effective
        again = bool(self.storage.get_trial_system_attrs(trial._trial_id).get(REMEASURE_ATTR))
        if self._reuse_or_claim(trial, eff, again) == REUSED:
            return REUSED
        if not self._budget_allows(trial):
            return self._abandon(trial)
        self.emit("trial_start", {"trial": trial.number, "spec": eff.label(), "requested": requested.label()})
        m = self._measure_trial(trial, eff, baseline)
        return FAILED if m.failure_class else MEASURED

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

    def _reuse_or_claim(self, trial, eff: SpecConfig, again: bool = False) -> str:
        """:data:`REUSED` when the effective setting was measured (the trial is told), else claim it
        for this trial, waiting while another worker measures it; returns ``"claimed"``.

        ``again`` (a deliberate re-measurement): a setting measured before is claimed under its own
        key and measured once more; another worker measuring or re-measuring it now makes this
        trial a reuse instead (no wait: the sampler decides afresh with that result)."""
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
                    return "claimed"
                trial.set_user_attr("claim", None)
                continue
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
        running = self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        in_flight = sum(1 for t in running if t.number != trial.number and t.user_attrs.get("launching"))
        return self.launched_in_study() + in_flight < budget

    def _abandon(self, trial) -> str:
        from optuna.trial import TrialState

        trial.set_user_attr("launching", False)
        trial.set_user_attr("status", ABANDONED)
        tell(self.study, trial, state=TrialState.FAIL)
        return ABANDONED

    def _measure_trial(self, trial, eff: SpecConfig, baseline: Baseline):
        from optuna.trial import TrialState

        try:
            return self.measure(eff, f"trials/{trial.number}", trial, baseline=baseline)
        except BaseException:
            # Ctrl-C or a crash of the tuner itself: the server is stopped by the backend; the trial
            # goes back to the queue with the same parameters.
            if self.study.get_trials(deepcopy=False)[trial.number].state == TrialState.RUNNING:
                tell(self.study, trial, state=TrialState.FAIL)
                self.study.enqueue_trial(trial.params, user_attrs={"retry_of": trial.number})
            raise

    def _claimed_by_other(self, key: str, number: int) -> bool:
        from optuna.trial import TrialState

        running = self.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        return any(t.number != number and t.user_attrs.get("claim") in (key, key + AGAIN) for t in running)

    def _prior_measurement(self, key: str, number: int):
        for r in load_records(self.study):
            if r.number != number and r.attrs.get("effective_key") == key and r.status in (MEASURED, FAILED):
                return r
        return None

    # -- measuring and telling ------------------------------------------------------------------
    def measure(self, spec: SpecConfig | None, label: str, trial, baseline: Baseline | None = None,
                study=None):
        """Measure through the backend; the result is written to storage before the server stops.

        ``baseline=None`` measures the baseline trial of ``study`` (its figures only, no tell);
        otherwise the trial is judged against ``baseline`` and told.
        """
        study = study or self.study

        def record(m) -> None:
            # The server log (a snapshot, before the server stops) and the suite's JSON, as Optuna
            # artifacts of the still-running trial, so optuna-dashboard shows them.
            from .artifacts import store_trial_artifacts

            files = [p for p in (m.log_path, m.result_path) if p]
            if files:
                store_trial_artifacts(study, trial, files, self.config.workdir)
            if baseline is None:  # the baseline trial
                for k, v in baseline_attrs(m, self.config).items():
                    trial.set_user_attr(k, v)
                if not m.failure_class:
                    trial.set_user_attr("status", MEASURED)
                return
            verdict = judge_measurement(m, spec, self.config.objectives, baseline.figures, self.config,
                                        baseline.attrs)
            self._finish(trial, verdict.status, verdict.values, verdict.attrs,
                         feasible=verdict.status == MEASURED)
            self.emit("trial_done", {"trial": trial.number, "spec": spec.label(), "status": verdict.status,
                                     "values": verdict.values, "failure_class": verdict.attrs.get("failure_class")})

        m = self.backend.measure(spec, label, record, on_event=self.emit)
        self.durations.append(m.duration_s)
        return m

    def _finish(self, trial, status: str, values, attrs: dict, feasible: bool = False) -> None:
        """Attributes, constraint, then tell: all before anything else happens to the trial."""
        for k, v in attrs.items():
            trial.set_user_attr(k, v)
        trial.set_user_attr("status", status)
        trial.set_user_attr("finished_at", utc_now())
        if not feasible:
            # Shown beside the values in optuna-dashboard, which also greys the trial out as
            # infeasible (the constraint): the values are not a result.
            why = attrs.get("failure_class") or status
            trial.set_user_attr("note", f"nothing measured ({status}: {why}); the values are worst-case "
                                        "placeholders that steer the sampler away, not results")
        value = -1.0 if feasible else 1.0
        trial.set_constraint(CONSTRAINT, value)
        # The study's limits (SLOs, lossless), each by how much it is broken (tuner.engine.limits).
        extra = extra_constraints(attrs) if feasible else {}
        for name, limit in extra.items():
            trial.set_constraint(name, limit)
        # optuna-dashboard (0.21) reads only the older list form of constraints (system attribute
        # "constraints"), which Optuna 5 still reads too: without it the dashboard marks nothing
        # infeasible. Both forms hold the same values, so feasibility is the same either way (and
        # the samplers' sum of violations is doubled for every trial alike, so their order holds).
        self.storage.set_trial_system_attr(trial._trial_id, LEGACY_CONSTRAINTS, [value, *extra.values()])
        tell(self.study, trial, values if values is not None else worst_values(self.config.objectives))
