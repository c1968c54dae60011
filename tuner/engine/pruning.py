"""Stopping a trial once its result is decided: partial estimates, the measured noise, the front.

Every measurement follows the study's staged order (:func:`tuner.bench.plan.stage_plan`), the
baseline's too. After each stage but the last, :class:`StageJudge` (the backend's ``on_stage``):

1. estimates the trial's objectives from the figures so far, each against the baseline's figures
   after the same stage (:func:`stage_estimates`: the same requests on both sides), and records
   them: Optuna intermediate values (step ``stage * n_objectives + i`` holds objective ``i``; Optuna
   keeps one float per step) and the ``stages`` user attribute;
2. asks :class:`FrontPruner` whether the trial is decided. It is when some trial of the current
   front (feasible whole-suite measurements) beats the estimate on **every** objective by more than
   ``z`` standard deviations of the estimate's error plus ``margin`` (:func:`front_verdict`). A
   figure whose requests are all measured has no error left (the sweep objective after the probe);
3. if so, the suite stops there and the trial is told PRUNED (:func:`pruned_attrs`): its partial
   figures kept in the ``partial`` attribute and the intermediate values, never as a result.

The measured noise (:func:`stage_noise`), per stage and objective, from two sources:

* the sampling error of the requests still to come: the spread of repeated requests within the
  baseline's suite (:data:`REQUEST_CV_ATTR`; :data:`PRIOR_REQUEST_CV` when the suite repeats
  nothing) scaled to the share of the figure's requests measured so far, ``cv * sqrt(1/n - 1/N)``.
  With adaptive repeats (``suite.adaptive``) a row may get up to ``max_repeats`` readings after the
  last stage (:meth:`tuner.bench.runner.SuiteRunner._top_up`), so ``N`` is that many per row and no
  figure is complete before the suite ends (QA, qa139: the probe's one batch at C=32 was judged final,
  with no error, while the whole figure was the mean of four);
* how far the estimates after that stage landed from the whole-suite values on the trials the study
  measured completely (log ratio), which also sees what sampling does not, such as short requests
  reading lower than long ones; pooled with the first as a prior worth :data:`PRIOR_WEIGHT` trials.

The study's own record is biased: the trials it holds are those that were *not* pruned, so partial
estimates that read low are missing from it. Hence the sampling error is a floor under the spread,
and a mean error is corrected only when the estimates read low (it then prunes less, never more).
No trial is pruned before ``startup_trials`` complete measurements.

Optuna's own pruning API (``trial.report``, ``should_prune``) refuses multi-objective studies, so the
values are written through the storage and the pruner is called directly; it is an Optuna
``BasePruner`` all the same. A pruned trial also carries the violated ``measured`` constraint: TPE
then counts it with the infeasible trials (its multi-objective split cannot rank pruned trials that
have intermediate values) and steers away from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

from optuna.pruners import BasePruner

from ..bench.plan import complete_after, requests_until
from ..config.study import StudyConfig, objective_concurrency
from .objectives import objective_values
from .outcome import is_figure
from .patience import fail_fast, storage_error, unreachable_now
from .records import MEASURED, StoredFigures, finite_number, front_records, load_records

#: user attribute: per stage, ``{"stage": name, "estimates": [...]}`` (every measured trial)
STAGES_ATTR = "stages"
#: baseline attribute: per stage, ``{"stage": name, "single_tok_per_s": .., "tok_per_s@C": ..}``
BASELINE_STAGES_ATTR = "stage_figures"
#: baseline attribute: relative spread of repeated requests within the suite
REQUEST_CV_ATTR = "request_cv"
#: the spread of one request when the suite repeats none (a GPU server's run-to-run spread)
PRIOR_REQUEST_CV = 0.02
#: how many trials' worth the prior counts against the study's own partial-to-full errors
PRIOR_WEIGHT = 2.0

Event = Callable[[str, dict], None]


def last_estimates(attrs: dict) -> list[float] | None:
    """A trial's objective estimates after its last recorded stage (``attrs``: its user attributes);
    for a pruned trial, the partial values it was judged on. None when it recorded no stage, or
    when the last one is not ``{stage, estimates: [finite numbers]}`` (an attribute edited by hand)."""
    stages = attrs.get(STAGES_ATTR)
    last = stages[-1] if isinstance(stages, list) and stages else None
    estimates = last.get("estimates") if isinstance(last, dict) else None
    if not isinstance(estimates, list) or not all(finite_number(v) for v in estimates):
        return None
    return estimates


def stage_intermediate_values(stages: Sequence[dict]) -> dict[int, float]:
    """The Optuna intermediate values of a ``stages`` attribute (step ``stage * n_objectives + i``
    holds objective ``i``, as :class:`StageJudge` writes them): what a measurement re-homed from the
    journal carries again (:mod:`tuner.engine.finish`)."""
    out: dict[int, float] = {}
    for k, st in enumerate(stages or []):
        estimates = st.get("estimates") if isinstance(st, dict) else None
        for i, v in enumerate(estimates or []):
            if finite_number(v):
                out[k * len(estimates) + i] = float(v)
    return out


# -- figures and estimates ---------------------------------------------------------------------------
def baseline_stage_attrs(figures) -> dict:
    """The baseline's figures after each stage (absolute tok/s) and its request spread."""
    stages = []
    for name, partial in getattr(figures, "stage_results", lambda: [])():
        tps = {f"tok_per_s@{c}": v for c, v in _levels(partial).items()}
        stages.append({"stage": name, "single_tok_per_s": partial.single_tok_per_s, **tps})
    cv = getattr(figures, "request_cv", None)
    return {BASELINE_STAGES_ATTR: stages, **({REQUEST_CV_ATTR: cv} if cv is not None else {})} if stages else {}


def usable_baseline_stages(stages) -> list[dict]:
    """The baseline's ``stage_figures`` when every entry is ``{stage: name, figure: number, ...}``
    with finite figures; else ``[]``: nothing to compare with, so nothing is pruned (an
    attribute edited by hand must not end a measurement in a traceback)."""
    def ok(st) -> bool:
        figures = [v for k, v in st.items() if k != "stage"] if isinstance(st, dict) else [None]
        return isinstance(st, dict) and isinstance(st.get("stage"), str) and all(
            v is None or finite_number(v) for v in figures)

    return list(stages) if isinstance(stages, list) and all(ok(st) for st in stages) else []


def _levels(figures) -> dict[int, float]:
    if hasattr(figures, "sweep_rows"):
        return {row.concurrency: row.tok_per_s.mean for row in figures.sweep_rows if row.tok_per_s}
    return {c: v for c, v in figures.tok_per_s.items() if v}


def stage_estimates(objectives: Sequence[str], partial, baseline_stage: dict, config: StudyConfig | None = None
                    ) -> list[float] | None:
    """The objectives of ``partial`` (figures after a stage) against the baseline's after the same
    stage; None when a figure an objective needs is not measured yet."""
    extra = None
    if config is not None and any(o.startswith("goodput") for o in objectives):
        from .limits import goodput_attrs

        extra = goodput_attrs(partial, config.slo)
    try:
        return objective_values(objectives, partial, StoredFigures.from_attrs(baseline_stage), extra)
    except (ValueError, ZeroDivisionError):
        return None


# -- the noise -----------------------------------------------------------------------------------------
@dataclass
class StageNoise:
    """Per objective: the mean log ratio full / estimate (``bias``) and its spread (``sd``)."""

    bias: list[float]
    sd: list[float]
    trials: int  #: complete measurements it was learned from


def stage_noise(history: Sequence[tuple[Sequence[float], Sequence[float]]], prior_sd: Sequence[float],
                exact: Sequence[bool], prior_weight: float = PRIOR_WEIGHT) -> StageNoise:
    """The error of an estimate after one stage: ``history`` holds ``(whole-suite values, estimates
    after the stage)`` of trials measured completely; ``prior_sd`` the sampling error per objective
    (a floor under the spread); ``exact``: objectives whose figure is complete after the stage (no
    error at all). See the module docstring for why the corrections only ever prune less."""
    n_obj = len(prior_sd)
    logs = [[math.log(full[i] / est[i]) for full, est in history if full[i] > 0 and est[i] > 0]
            for i in range(n_obj)]
    bias, sd = [], []
    for i in range(n_obj):
        if exact[i]:
            bias.append(0.0)
            sd.append(0.0)
            continue
        d = logs[i]
        b = sum(d) / (len(d) + prior_weight)  # shrunk towards no bias while there are few trials
        var = (sum((x - b) ** 2 for x in d) + prior_weight * prior_sd[i] ** 2) / (len(d) + prior_weight)
        bias.append(max(0.0, b))
        sd.append(max(prior_sd[i], math.sqrt(var)))
    return StageNoise(bias, sd, len(history))


# -- the decision ----------------------------------------------------------------------------------------
@dataclass
class Verdict:
    pruned: bool
    by: int | None = None  #: the front trial that dominates the estimate
    gaps: list[float] = field(default_factory=list)  #: log(front / estimate corrected), per objective
    needed: list[float] = field(default_factory=list)  #: the log gap each objective had to clear

    def as_dict(self) -> dict:
        return {"by": self.by, "gaps": [round(g, 5) for g in self.gaps], "needed": [round(n, 5) for n in self.needed]}


def front_verdict(estimate: Sequence[float], front: Sequence[tuple[int, Sequence[float]]], noise: StageNoise,
                  z: float, margin: float) -> Verdict:
    """Whether some front point beats ``estimate`` on every objective by more than ``z`` noise
    standard deviations plus ``margin`` (all objectives maximized, positive)."""
    needed = [z * s + math.log1p(margin) for s in noise.sd]
    best: Verdict | None = None
    for number, values in front:
        gaps = [math.log(f) - math.log(e) - b if f > 0 and e > 0 else -math.inf
                for f, e, b in zip(values, estimate, noise.bias)]
        slack = min(g - n for g, n in zip(gaps, needed))
        if best is None or slack > min(g - n for g, n in zip(best.gaps, needed)):
            best = Verdict(slack > 0, number, gaps, needed)
    return best or Verdict(False, None, [], needed)


class FrontPruner(BasePruner):
    """Optuna's pruner interface over :func:`front_verdict`: the trial's latest stage estimates (its
    ``stages`` attribute) against the study's front, with the study's measured noise.

    ``plan``: the study's staged order; ``request_cv``: the baseline's request spread (None, or
    anything but a finite number >= 0: the prior's default)."""

    def __init__(self, objectives: Sequence[str], plan, settings, request_cv: float | None = None,
                 adaptive_max_repeats: int | None = None):
        self.objectives, self.plan, self.settings = list(objectives), list(plan), settings
        usable = finite_number(request_cv) and request_cv >= 0  # not one edited by hand into text
        self.request_cv = request_cv if usable else PRIOR_REQUEST_CV
        #: the suite's ``adaptive.max_repeats`` (None: no adaptive repeats): see the module docstring
        self.adaptive_max_repeats = adaptive_max_repeats

    def prune(self, study, trial) -> bool:
        return self.verdict(study, trial).pruned

    def verdict(self, study, trial) -> Verdict:
        stages = trial.user_attrs.get(STAGES_ATTR) or []
        if not stages or not self.settings.enabled:
            return Verdict(False)
        name = stages[-1]["stage"]
        k = next((i for i, st in enumerate(self.plan) if st.name == name), None)
        complete, front = self._complete_and_front(study, trial.number)
        if k is None or len(complete) < self.settings.startup_trials:
            return Verdict(False)
        # An estimate per objective, as StageJudge writes them: a stage entry with more or fewer (an
        # attribute edited by hand, another tool's) is no estimate of these objectives (QA, qa191:
        # one entry of one value in a two-objective study ended every later run's first trial in
        # IndexError from stage_noise, after the probe, the trial interrupted and queued again)
        history = [(values, e["estimates"]) for values, st in complete for e in st
                   if e["stage"] == name and len(e["estimates"]) == len(self.objectives)]
        noise = self.noise(k, history)
        return front_verdict(stages[-1]["estimates"], front, noise, self.settings.z, self.settings.margin)

    def noise(self, k: int, history) -> StageNoise:
        """The error of the estimates after stage ``k`` of the plan (``history``: :func:`stage_noise`'s)."""
        concurrencies = [objective_concurrency(o) for o in self.objectives]
        adaptive = self.adaptive_max_repeats
        exact = [not adaptive and complete_after(self.plan, c) <= k for c in concurrencies]
        prior = []
        for c in concurrencies:
            n, total = requests_until(self.plan, c, k)
            if adaptive and total:
                # up to max_repeats readings per row in the end, however many the plan holds
                repeats = planned_repeats(self.plan, c)
                total = total // repeats * max(adaptive, repeats)
            prior.append(self.request_cv * math.sqrt(max(0.0, 1 / n - 1 / total)) if n else self.request_cv)
        return stage_noise(history, prior, exact)

    def _complete_and_front(self, study, number: int):
        """Whole-suite measurements ``(values, stages)`` with stage estimates, and the feasible front
        ``(number, values)``: :func:`~tuner.engine.records.front_records`, the front every reader
        shows (a setting measured again stands for the mean of its readings), without this trial."""
        records = [r for r in load_records(study) if r.number != number]
        complete = [(list(r.values), r.attrs[STAGES_ATTR]) for r in records
                    if r.status == MEASURED and r.values and r.attrs.get(STAGES_ATTR)]
        return complete, [(r.number, list(r.values)) for r in front_records(records)]


# -- one trial's stages ---------------------------------------------------------------------------------
class StageJudge:
    """The ``on_stage`` callback of one trial's measurement (see the module docstring): records each
    stage's estimates and says whether to stop. ``verdict`` holds the decision once pruned."""

    def __init__(self, config: StudyConfig, study, trial, baseline_attrs: dict, plan, emit: Event,
                 remeasure: bool = False, replaced: Callable[[], bool] | None = None):
        self.config, self.study, self.trial, self.emit = config, study, trial, emit
        #: whether the study was deleted since the trial was asked (its id may be another study's
        #: trial's now): then nothing is written (tuner.engine.study.study_replaced)
        self.replaced = replaced
        #: a deliberate re-measurement (the sampler's): recorded, never pruned. It measures a setting
        #: export may pick, to settle its value; stopping it would keep the lucky first reading.
        self.remeasure = remeasure
        self.baseline_stages = usable_baseline_stages(baseline_attrs.get(BASELINE_STAGES_ATTR))
        self.pruner = FrontPruner(config.objectives, plan, config.budget.prune, baseline_attrs.get(REQUEST_CV_ATTR))
        self.stages: list[dict] = []
        self.verdict: Verdict | None = None
        #: the trial was finished by someone else meanwhile (another worker failed it as dead while
        #: this one stood still), or is gone from the storage (an SQLite file put back from an older
        #: copy): nothing more is written to it, nothing decided; the finish decides (the stall watch
        #: drops the measurement, or it is re-homed: tuner.engine.finish)
        self.taken_over = False

    def __call__(self, index: int, name: str, partial) -> bool:
        if index >= len(self.baseline_stages) or self.baseline_stages[index].get("stage") != name:
            return False  # a baseline measured in another order: nothing to compare with
        estimates = stage_estimates(self.config.objectives, partial, self.baseline_stages[index], self.config)
        if estimates is None:
            return False
        self.pruner.adaptive_max_repeats = adaptive_max_repeats(partial)
        storage, tid, n = self.study._storage, self.trial._trial_id, len(estimates)
        self.stages.append({"stage": name, "estimates": [float(v) for v in estimates]})
        if unreachable_now(storage) or self.taken_over:
            return False  # a storage outage: measure on, decide nothing (the stages go with the finish)
        from optuna.exceptions import UpdateFinishedTrialError

        try:
            # The server is measuring: a storage outage must not hold the suite up (or lose it).
            with fail_fast():
                if self.replaced is not None and self.replaced():
                    self.taken_over = True  # the finish stops the worker (StudyReplaced)
                    return False
                for i, v in enumerate(estimates):
                    storage.set_trial_intermediate_value(tid, index * n + i, float(v))
                self.trial.set_user_attr(STAGES_ATTR, self.stages)
                if not self.config.budget.prune.enabled or not self.pruner.plan or self.remeasure:
                    return False  # off, a backend that does not say its order (no error estimate), or again
                verdict = self.pruner.verdict(self.study, storage.get_trial(tid))
        except UpdateFinishedTrialError:
            self.taken_over = True
            return False
        except KeyError:
            # Optuna's "Record does not exist": the trial is gone from the storage (QA: the SQLite
            # file put back from a copy taken before it was asked ended the worker in a traceback,
            # the measurement lost). Measure on; the finish re-homes the measurement.
            if not trial_gone(storage, tid):
                raise
            self.taken_over = True
            return False
        except Exception as exc:
            # an outage, or a storage that refuses this worker (a password changed, a database
            # dropped): measure on, decide nothing; the finish journals first, then meets it
            if not storage_error(exc):
                raise
            return False
        if verdict.pruned:
            self.verdict = verdict
            self.emit("phase", {"phase": "pruned", "stage": name, "by": verdict.by})
        return verdict.pruned


def planned_repeats(plan, concurrency: int | None) -> int:
    """How many readings the plan gives each row of a figure: the single-request rows (``concurrency``
    None, per prompt and length) or the sweep at ``concurrency`` (one row, its batches)."""
    if concurrency is None:
        steps = [(s.prompt, s.max_tokens) for stage in plan for s in stage.single]
    else:
        steps = [s.concurrency for stage in plan for s in stage.sweep if s.concurrency == concurrency]
    return max(1, len(steps) // max(1, len(set(steps))))


def adaptive_max_repeats(figures) -> int | None:
    """The ``adaptive.max_repeats`` of the suite ``figures`` were measured with (a
    :class:`tuner.bench.SuiteResult` carries its suite), or None: no adaptive repeats, or figures
    that do not say (the performance model repeats nothing adaptively)."""
    suite = getattr(figures, "suite", None)
    adaptive = suite.get("adaptive") if isinstance(suite, dict) else None
    if not isinstance(adaptive, dict):
        return None
    cap = adaptive.get("max_repeats", 10)  # tuner.config.suite.AdaptiveSpec's default
    return cap if isinstance(cap, int) and not isinstance(cap, bool) and cap >= 1 else 10


def trial_gone(storage, trial_id: int) -> bool:
    """Whether the storage no longer holds the trial ``trial_id`` (Optuna's KeyError, "Record does
    not exist."): its study deleted, or an SQLite file put back from an older copy."""
    try:
        storage.get_trial(trial_id)
    except KeyError:
        return True
    return False


def pruned_attrs(attrs: dict, stage: str, verdict: Verdict | None) -> dict:
    """A pruned trial's attributes: its figures moved under ``partial`` (they are not a result) and
    the decision: the stage, the front trial that dominates it, the gaps and what they had to clear."""
    partial = {k: attrs.pop(k) for k in [k for k in attrs if is_figure(k)]}
    return {**attrs, "partial": partial, "pruned_at": stage,
            "pruned_by": verdict.by if verdict else None, "prune_verdict": verdict.as_dict() if verdict else None}

