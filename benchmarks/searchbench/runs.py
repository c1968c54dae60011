"""One benchmark run: a whole study on the real engine against a target, and its scores.

The study is created from a study file (as data) with ``server.backend: model`` on the target's
landscape table and run by :func:`tuner.engine.runner.run_study` on in-memory Optuna storage, with
the backend :func:`tuner.engine.backends.make_backend` builds: the same path as ``tuner study run``.

Scores, per run:

* **exported picks** (the goal): after every launch, the setting ``tuner study export --pick single``
  and ``--pick throughput`` would return at that moment -- computed by the export's own pick code,
  :func:`tuner.results.pareto.build_front` and :func:`~tuner.results.pareto.pick_record`, on the
  trials finished by then -- judged by its TRUE value: within 3% of the true optimum of its
  objective or not;
* **first hit** (the older figure): the first launch at which the best *measured* setting of each
  objective is truly within 3% (a later lucky reading may replace it, so it overstates what a user
  gets);
* **why a pick missed** (:meth:`RunResult.misses`): an exported pick not within 3% at the horizon is
  *unseen* when no setting truly within 3% of that objective's optimum had been measured by then
  (the search never got there: more launches or other moves would help), *misread* when one had
  been but its readings ranked below another's (the noise: re-measuring would help);
* the hypervolume of everything measured after 8, 16 and 32 launches (true values) as a fraction of
  the true front's, above the landscape's nadir;
* the modelled GPU time the study spent (every measurement's ``model_duration_s``, the baseline's
  included) until the exported picks were within 3% for good;
* with a modelled-time budget or pruning (:mod:`.night`): the exported picks and the settings
  measured after 2, 4 and 8 modelled hours, and whether pruning ever stopped a setting the whole
  suite would have put within 1% of the front.

A launch is a server start: a trial measured, failed, or pruned after launching.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path

WITHIN = 0.03  #: "found" means within 3% of the true optimum
HORIZON = 16  #: a night on K2.6 TP8 holds about 16 launches
HV_AT = (8, 16, 32)


@dataclass
class RunResult:
    strategy: str
    target: str
    seed: int
    #: per objective: launches (and proposals) until the study's best measured setting is truly
    #: within 3% (first hit); None: never
    launches_to: list = field(default_factory=list)
    proposals_to: list = field(default_factory=list)
    #: per objective: the first launch that measured a setting truly within 3%, whatever it read
    #: (None: never)
    found_at: list = field(default_factory=list)
    both_launches: int | None = None
    both_proposals: int | None = None
    #: per launch (index 0 = after launch 1): whether export's single / throughput pick is truly
    #: within 3%
    export_ok: list = field(default_factory=list)
    #: the exported picks at the horizon: true value / optimum, per objective
    export_ratio: list = field(default_factory=list)
    hv_frac: dict = field(default_factory=dict)
    launches: int = 0
    proposals: int = 0
    model_hours: list = field(default_factory=list)  #: modelled GPU hours spent after each launch
    seconds: float = 0.0
    prune: bool = False  #: the study pruned (``budget.prune``)
    pruned: int = 0  #: launches stopped early
    #: modelled hours -> {"launches", "whole", "pruned", "export": [true / optimum per pick]}
    by_hours: dict = field(default_factory=dict)
    #: {"pruned": n, "near_front": how many the whole suite would have put within 1% of the study's
    #: final front, "near_true_front": how many are truly within 1% of the true front}
    prune_checks: dict = field(default_factory=dict)
    #: with a time budget: :func:`searchbench.night.pruning_ceiling` (what no pruning rule can beat)
    ceiling: dict | None = None

    def export_both(self, at: int) -> bool:
        """Both exported picks truly within 3% after launch ``at`` (the last launch if fewer)."""
        if not self.export_ok:
            return False
        single, throughput = self.export_ok[min(at, len(self.export_ok)) - 1]
        return single and throughput

    def misses(self, horizon: int = HORIZON) -> list[str | None]:
        """Per objective, why export's pick after launch ``horizon`` is not within 3%: ``"unseen"``
        (no setting within 3% measured by then), ``"misread"`` (one was, but export returns
        another); None for a pick within 3%."""
        if not self.export_ok:
            return ["unseen"] * len(self.found_at)
        at = min(horizon, len(self.export_ok))
        return [None if ok else "misread" if found is not None and found <= at else "unseen"
                for ok, found in zip(self.export_ok[at - 1], self.found_at)]

    def export_settled(self, horizon: int = HORIZON) -> int | None:
        """The first launch from which both exported picks stay within 3% up to ``horizon``."""
        if not self.export_both(horizon):
            return None
        at = min(horizon, len(self.export_ok))
        while at > 1 and self.export_both(at - 1):
            at -= 1
        return at


def run_study_on(target, truth, strategy: str, seed: int, *, space: Path, suite: str, budget: int,
                 noise: float, prune: bool | dict = False, hours: float | None = None, load_s: float | None = None):
    """One whole study of ``strategy`` on ``target`` (in-memory storage): ``(study, backend)``; with
    ``hours``, the study runs for that much modelled GPU time instead of ``budget`` launches."""
    import optuna

    from tuner.config.space import SearchSpace
    from tuner.config.study import study_from_dict
    from tuner.config.suite import load_suite
    from tuner.engine.backends import make_backend
    from tuner.engine.runner import run_study
    from tuner.engine.study import create_study, open_study

    from .strategies import STRATEGIES, grid_launches, study_data

    config = study_from_dict(study_data(strategy, seed, target.table, truth.objectives, space, suite, budget, noise,
                                        prune, hours, load_s))
    storage = optuna.storages.InMemoryStorage()
    create_study(config, storage)
    backend = make_backend(config, SearchSpace.load(space), load_suite(suite))
    grid = grid_launches(space) if STRATEGIES[strategy].get("grid") else None
    n_trials = (grid if hours else min(budget, grid)) if grid else (None if hours else budget)
    run_study(config, storage, backend, n_trials=n_trials, timeout_s=hours * 3600 if hours else None)
    return open_study(config.name, storage), backend


def run_one(target, truth, strategy: str, seed: int, *, space: Path, suite: str, budget: int,
            noise: float, horizon: int = HORIZON, prune: bool | dict = False, hours: float | None = None,
            load_s: float | None = None) -> RunResult:
    from tuner.engine.baseline import find_baseline
    from tuner.engine.records import FAILED, INVALID, MEASURED, PRUNED, REUSED, load_records

    from .night import prune_checks, time_scores

    started = time.monotonic()
    study, backend = run_study_on(target, truth, strategy, seed, space=space, suite=suite, budget=budget,
                                  noise=noise, prune=prune, hours=hours, load_s=load_s)
    base = find_baseline(study)
    # Finished trials only: queued seed trials the run never reached are not proposals.
    records = [r for r in load_records(study) if r.status in (MEASURED, FAILED, INVALID, REUSED, PRUNED)]
    out = score(records, truth, base.attrs, strategy, target.name, seed, horizon)
    out.model_hours = _model_hours(records, base.attrs)
    out.prune = bool(prune)
    if hours:
        out.by_hours = time_scores(records, truth, base.attrs, hours)
    if prune:
        out.prune_checks = prune_checks(records, truth, base.attrs, backend)
    out.seconds = time.monotonic() - started
    if backend.calls != out.launches + 1:  # + the baseline: the engine launched what it recorded
        raise RuntimeError(f"{strategy}/{target.name}/{seed}: {backend.calls} backend calls for "
                           f"{out.launches} launches")
    if hours:  # measures again (other labels): after the check of the run's own launches
        from .night import pruning_ceiling

        out.ceiling = pruning_ceiling(records, base.attrs, backend, hours, study_startup(study))
    return out


def study_startup(study) -> int:
    """The study's ``budget.prune.startup_trials`` (launches measured whole before any pruning)."""
    from tuner.engine.study import config_from_study

    return config_from_study(study)[0].budget.prune.startup_trials


def score(records, truth, baseline_attrs: dict, strategy: str, name: str, seed: int,
          horizon: int = HORIZON) -> RunResult:
    """Every score of one run's finished trial records (see the module docstring)."""
    from tuner.engine.records import MEASURED, PRUNED, launched

    n = len(truth.objectives)
    out = RunResult(strategy, name, seed, [None] * n, [None] * n, [None] * n)
    best: list = [None] * n
    measured: list = []
    launches = 0

    def near(spec, i: int) -> bool:  # truly within WITHIN of objective i's optimum
        return truth.values[spec][i] >= (1 - WITHIN) * truth.optimum[i]

    for proposals, r in enumerate(records, start=1):
        if not launched(r.status, r.attrs):
            continue
        launches += 1
        out.pruned += r.status == PRUNED
        if r.status == MEASURED and r.effective in truth.values:
            measured.append(r.effective)
            for i, v in enumerate(r.values):
                if best[i] is None or v > best[i][0]:
                    best[i] = (v, r.effective)
                if out.found_at[i] is None and near(r.effective, i):
                    out.found_at[i] = launches
        for i in range(n):
            found = best[i] is not None and near(best[i][1], i)
            if out.launches_to[i] is None and found:
                out.launches_to[i], out.proposals_to[i] = launches, proposals
        if out.both_launches is None and all(x is not None for x in out.launches_to):
            out.both_launches, out.both_proposals = launches, proposals
        ratios = export_ratios(records[:proposals], truth, baseline_attrs)
        out.export_ok.append([x >= 1 - WITHIN for x in ratios])
        if launches == min(horizon, len([x for x in records if launched(x.status, x.attrs)])):
            out.export_ratio = ratios
        if launches in HV_AT:
            out.hv_frac[launches] = hv_fraction(measured, truth)
    for k in HV_AT:  # a strategy that stopped early keeps what it had
        if k not in out.hv_frac and launches < k:
            out.hv_frac[k] = hv_fraction(measured, truth)
    out.launches, out.proposals = launches, len(records)
    return out


def export_ratios(records, truth, baseline_attrs: dict) -> list[float]:
    """True value / optimum of what ``export --pick single`` and ``--pick throughput`` return now
    (0 when export has nothing to return yet)."""
    from tuner.results.pareto import PickError, build_front, pick_record

    try:
        front = build_front("run", list(truth.objectives), list(records), baseline_attrs)
    except PickError:
        return [0.0] * len(truth.objectives)
    out = []
    for i, pick in enumerate(("single", "throughput")):
        spec = pick_record(front, records, pick).effective
        out.append(truth.values[spec][i] / truth.optimum[i] if spec in truth.values else 0.0)
    return out


def hv_fraction(configs: list, truth) -> float:
    """The hypervolume of ``configs`` (true values, above the landscape's nadir) over the true
    front's. A front with no volume above the nadir (one setting; two, each best at one objective;
    a flat table) has nothing to divide by: then the share of the true front's distinct points
    measured (settings with the same figures are one point: on a flat table any one is all)."""
    from tuner.engine.objectives import hypervolume, pareto_front

    if not configs:
        return 0.0
    if truth.front_hv <= 0:
        points = list(dict.fromkeys(truth.values.values()))
        front = {points[i] for i in pareto_front(points)}
        return len(front & {truth.values[c] for c in configs}) / len(front)
    return hypervolume([truth.values[c] for c in configs], truth.nadir) / truth.front_hv


def _model_hours(records, baseline_attrs: dict) -> list[float]:
    """Modelled GPU hours spent after each launch (the baseline's measurement first)."""
    from tuner.engine.records import launched

    spent = float(baseline_attrs.get("model_duration_s") or 0.0)
    out = []
    for r in records:
        if launched(r.status, r.attrs):
            spent += float(r.attrs.get("model_duration_s") or 0.0)
            out.append(spent / 3600)
    return out
