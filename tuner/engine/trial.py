"""One trial, end to end: ask, apply SGLang's rules, reuse or claim, check the budget, measure, tell.

:class:`TrialRunner` holds what every trial of one worker shares (config, study, space, backend,
worker identity) and runs a trial as a few named steps:

1. :meth:`TrialRunner.run_one` asks Optuna for a trial and keeps a heartbeat on it throughout;
2. :meth:`~TrialRunner._resolve`: a setting SGLang would refuse is recorded ``invalid``, never launched;
3. :meth:`~TrialRunner._reuse_or_claim`: a setting whose effective config was measured before reuses
   that measurement; otherwise the worker claims it (claim-then-look, :mod:`tuner.engine.workers`);
4. :meth:`~TrialRunner._budget_allows`: the study's launch budget, shared with the other workers;
5. :meth:`~TrialRunner.measure`: the backend measures in the study's staged order; after each stage
   :class:`tuner.engine.pruning.StageJudge` records the partial estimates and stops the suite once
   the front dominates them beyond the noise (the trial is PRUNED); the figures and the tell reach
   storage from the backend's ``record`` callback, before the server stops.

A setting pruned before is never launched again: a later proposal of it is told PRUNED at once
(``pruned_from``), costs no launch, and is never taken as a measurement of the setting.

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
from .outcome import FAILURE_KEYS, baseline_attrs, is_figure, judge_measurement, measurement_attrs
from .pruning import StageJudge, baseline_stage_attrs, pruned_attrs
from .records import (CONSTRAINT, FAILED, INVALID, MEASURED, PRUNED, PRUNED_FROM, REUSED, launched, load_records,
                      spec_from_params, spec_key)
from .workers import Heartbeat, Worker, reap_dead_trials, try_claim, wait_for_claim

#: The system attribute optuna-dashboard reads constraints from (Optuna's pre-5 list form).
LEGACY_CONSTRAINTS = "constraints"

#: status of a trial that stepped back because another worker took the study's last budget slot
ABANDONED = "abandoned"
#: what :meth:`TrialRunner.run_one` returns for a proposal of a setting pruned before (no launch)
PRUNED_BEFORE = "pruned_before"

Event = Callable[[str, dict], None]


class TrialRunner:
    """Runs this worker's trials of one study; see the module docstring for the steps."""

    def __init__(self, config: StudyConfig, study, space: SearchSpace, backend, worker: Worker, emit: Event):
        self.config, self.study, self.space, self.backend = config, study, space, backend
        self.worker, self.emit = worker, emit
        self.storage = study._storage
        self.durations: list[float] = []  #: wall seconds of every measurement this worker made
        #: ``(seconds, pruned)`` of every measurement: modelled seconds on backend model, else wall
        self.spent: list[tuple[float, bool]] = []

    # -- counting -------------------------------------------------------------------------------
    def budget(self) -> int | None:
        """The study's launch budget as stored now: another command may have raised it meanwhile
        (``run --add-trials``, a study file with a larger ``budget.n_trials``)."""
        from .study import stored_budget

        return stored_budget(self.study, self.config.budget.n_trials)

    def launched_in_study(self, records=None) -> int:
        """Launches the whole study has made (measured or failed), by every worker."""
        records = load_records(self.study) if records is None else records
        return sum(1 for r in records if launched(r.status, r.attrs))

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
        taken = self._reuse_or_claim(trial, eff)
        if taken != "claimed":
            return taken
        if not self._budget_allows(trial):
            return self._abandon(trial)
        self.emit("trial_start", {"trial": trial.number, "spec": eff.label(), "requested": requested.label()})
        m = self._measure_trial(trial, eff, baseline)
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

    def _reuse_or_claim(self, trial, eff: SpecConfig) -> str:
        """:data:`REUSED` when the effective setting was measured (the trial is told),
        :data:`PRUNED_BEFORE` when it was pruned (told PRUNED, no launch), else claim it for this
        trial, waiting while another worker measures it; returns ``"claimed"``."""
        key = spec_key(eff)
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

    def _prior_measurement(self, key: str, number: int):
        for r in load_records(self.study):
            if r.number != number and r.attrs.get("effective_key") == key and r.status in (MEASURED, FAILED, PRUNED):
                return r
        return None

    # -- measuring and telling ------------------------------------------------------------------
    def measure(self, spec: SpecConfig | None, label: str, trial, baseline: Baseline | None = None,
                study=None):
        """Measure through the backend; the result is written to storage before the server stops.

        ``baseline=None`` measures the baseline trial of ``study`` (its figures only, no tell);
        otherwise the trial is judged against ``baseline`` after every stage (pruned when decided)
        and at the end, and told.
        """
        study = study or self.study
        judge = None if baseline is None else StageJudge(self.config, study, trial, baseline.attrs,
                                                         getattr(self.backend, "plan", []), self.emit)

        def record(m) -> None:
            # The server log (a snapshot, before the server stops) and the suite's JSON, as Optuna
            # artifacts of the still-running trial, so optuna-dashboard shows them.
            from .artifacts import store_trial_artifacts

            files = [p for p in (m.log_path, m.result_path) if p]
            if files:
                store_trial_artifacts(study, trial, files, self.config.workdir)
            if baseline is None:  # the baseline trial
                attrs = {**baseline_attrs(m, self.config), **baseline_stage_attrs(m.figures)}
                for k, v in attrs.items():
                    trial.set_user_attr(k, v)
                if not m.failure_class:
                    trial.set_user_attr("status", MEASURED)
                return
            attrs = measurement_attrs(m, spec)
            # pruned, unless it failed or the server ran another setting (then judged as failed below)
            if m.stopped_after and not m.failure_class and not attrs.get("args_mismatch"):
                self._finish(trial, PRUNED, None, pruned_attrs(attrs, m.stopped_after, judge.verdict), pruned=True)
                self.emit("trial_done", {"trial": trial.number, "spec": spec.label(), "status": PRUNED,
                                         "values": None, "pruned_at": m.stopped_after,
                                         "pruned_by": judge.verdict.by if judge.verdict else None})
                return
            verdict = judge_measurement(m, spec, self.config.objectives, baseline.figures, self.config,
                                        baseline.attrs)
            self._finish(trial, verdict.status, verdict.values, verdict.attrs,
                         feasible=verdict.status == MEASURED)
            self.emit("trial_done", {"trial": trial.number, "spec": spec.label(), "status": verdict.status,
                                     "values": verdict.values, "failure_class": verdict.attrs.get("failure_class")})

        m = self.backend.measure(spec, label, record, on_event=self.emit, on_stage=judge)
        self.durations.append(m.duration_s)
        modelled = getattr(m, "model_duration_s", None)
        self.spent.append((m.duration_s if modelled is None else modelled, bool(m.stopped_after)))
        return m

    def _finish(self, trial, status: str, values, attrs: dict, feasible: bool = False, pruned: bool = False) -> None:
        """Attributes, constraint, then tell (``pruned``: as PRUNED, with no values): all before
        anything else happens to the trial."""
        from optuna.trial import TrialState

        for k, v in attrs.items():
            trial.set_user_attr(k, v)
        trial.set_user_attr("status", status)
        trial.set_user_attr("finished_at", utc_now())
        if pruned:
            first = attrs.get(PRUNED_FROM)
            trial.set_user_attr("note", f"pruned after stage {attrs.get('pruned_at')}" + (
                f" (trial {first} pruned this setting; not launched again)" if first is not None else
                f": dominated by trial {attrs.get('pruned_by')} beyond the noise") + "; its partial figures "
                "are intermediate values, not a result")
        elif not feasible:
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
        if pruned:
            tell(self.study, trial, state=TrialState.PRUNED)
        else:
            tell(self.study, trial, values if values is not None else worst_values(self.config.objectives))
