"""Samplers: the study's proposals for a small budget (~16 launches) in a ~1,000-setting space.

The default (``auto``) is :class:`tuner.engine.structured.StructuredSampler`, chosen by measurement on
the benchmark's training landscapes and reported on held-back test landscapes
(``benchmarks/search_efficiency.py``; README, "How the tuner searches"): a surrogate over the
enumerable settings that skips settings verifying a tree already measured, picks moves by their
expected value to the exported setting, and measures a pick again when its readings may mislead.
``local-tpe`` is the previous default (:class:`LocalTPESampler`: Optuna's multivariate TPE with local
moves around each objective's best measured setting); Optuna's ``tpe``, ``nsgaii``, ``random``,
``grid`` and ``gp`` (which needs torch) are there to compare.

Every sampler gets the worker's own seed (a shared seed makes a restarted worker propose the crashed
trial's parameters again). Failed and invalid trials carry a violated constraint (Optuna 5's
``trial.set_constraint``), which TPE, NSGA-II and GP use to steer away from them.
"""

from __future__ import annotations

import random

from ..config.space import SPEC_PARAMS
from ..config.study import SamplerSettings
from ..config.yamlfile import ConfigError
from ..sglang.rules import SpecConfig, candidate_count, resolve


#: ``local-tpe``'s settings (override any in the study file's ``sampler.options``)
LOCAL_TPE_OPTIONS = {"local_prob": 0.8, "draft_factor": 1.6, "center_tolerance": 0.03}
TPE_DEFAULTS = {"multivariate": True, "n_startup_trials": 6, "constant_liar": True}


def make_sampler(settings: SamplerSettings, seed: int, space, listed=None):
    """``space``: the study's :class:`tuner.config.space.SearchSpace` (``auto`` enumerates its
    settings; its values per flag are ``local-tpe``'s lattice and the grid sampler's default grid).
    ``listed``: the effective settings a landscape table holds (a grid measured on a node), of which
    ``auto`` proposes no other; Optuna's own samplers draw each flag apart and cannot keep to them."""
    import optuna.samplers as s

    grid = {name: space.values(name) for name in SPEC_PARAMS}
    opts = dict(settings.options)
    name = settings.name
    try:
        if name == "auto":
            from .structured import StructuredSampler

            return StructuredSampler(space, seed=seed, listed=listed, **opts)
        if name == "local-tpe":
            local = {k: opts.pop(k) for k in list(opts) if k in LOCAL_TPE_OPTIONS}
            return LocalTPESampler(grid, seed=seed, tpe_options={**TPE_DEFAULTS, **opts},
                                   **{**LOCAL_TPE_OPTIONS, **local})
        if name == "tpe":
            return s.TPESampler(seed=seed, **{**TPE_DEFAULTS, **opts})
        if name == "nsgaii":
            return s.NSGAIISampler(seed=seed, **opts)
        if name == "random":
            return s.RandomSampler(seed=seed, **opts)
        if name == "gp":
            try:
                import torch  # noqa: F401  - GPSampler's requirement, not one of ours
            except ImportError:
                raise ConfigError("study file", "sampler.name", "gp needs torch, which tuner does not "
                                  "install; `pip install torch` or use tpe") from None
            return s.GPSampler(seed=seed, **opts)
        if name == "grid":
            from .grid import StudyGridSampler

            return StudyGridSampler(opts.pop("search_space", grid), seed=seed, **opts)
    except TypeError as exc:
        raise ConfigError("study file", "sampler.options", f"not accepted by the {name} sampler: {exc}") from None
    raise ConfigError("study file", "sampler.name", f"unknown sampler {name!r}")


def _effective(trial) -> tuple:
    eff = trial.user_attrs["effective"]
    return eff["num_steps"], eff["eagle_topk"], eff["num_draft_tokens"]


def _away(center: tuple, move: tuple, other: tuple) -> float:
    """How far ``move`` steps from ``center`` away from ``other`` (log2 units, negative: towards)."""
    import math

    return sum(math.copysign(1, c - o) * (math.log2(m) - math.log2(c))
               for c, m, o in zip(center, move, other) if c != o)


def _optuna_base():
    from optuna.samplers import BaseSampler

    return BaseSampler


class LocalTPESampler(_optuna_base()):
    """Optuna's TPE, plus local moves around each objective's best measured setting.

    With probability ``local_prob`` a trial is a *local move*: take the objectives in turn, start
    from the setting with the best measured value of that objective (or, once its neighbours are all
    tried, from the next best within ``center_tolerance`` of it: with measurement noise of ~2% any
    of those may be the real best), and propose a neighbour not tried yet -- one more or one fewer
    step, the next larger or smaller topk, or the draft tokens times or over ``draft_factor`` (a
    tree too large for its steps and topk is shrunk to the largest SGLang accepts). When the best setting was itself reached by a local move, the same move is
    tried again first (a pattern move: the landscape is smooth, so a direction that paid tends to
    pay once more). Otherwise, or when every neighbour has been tried, TPE proposes.

    The sampler reads the effective setting of each finished trial from its ``effective`` user
    attribute (written by :mod:`tuner.engine`), so settings SGLang rewrites are not proposed twice.
    Moves are checked against SGLang's rules with the default server context; a move the study's
    own context rejects costs no launch (the engine refuses it and marks it infeasible). Local moves
    need TPE's multivariate mode (the default): they are relative parameters of all three flags.
    """

    LOCAL_FROM = "tuner:local_from"  #: trial system attr: the setting a local move started from

    def __init__(self, grid: dict[str, list[int]], seed: int | None = None, local_prob: float = 0.8,
                 draft_factor: float = 1.6, center_tolerance: float = 0.03, tpe_options: dict | None = None):
        from optuna.samplers import TPESampler

        if not 0 <= local_prob <= 1 or draft_factor <= 1 or not 0 <= center_tolerance < 1:
            raise TypeError("local_prob and center_tolerance must lie in [0, 1], draft_factor above 1")
        self._grid = {name: sorted(grid[name]) for name in SPEC_PARAMS}
        self._rng = random.Random(seed)
        self._local_prob = local_prob
        self._draft_factor = draft_factor
        self._center_tolerance = center_tolerance
        self._tpe = TPESampler(seed=seed, **(tpe_options or TPE_DEFAULTS))
        self._turn = 0

    # -- Optuna's sampler interface: TPE, unless a local move applies ------------------------------
    def reseed_rng(self) -> None:
        self._rng = random.Random()
        self._tpe.reseed_rng()

    def infer_relative_search_space(self, study, trial):
        return self._tpe.infer_relative_search_space(study, trial)

    def sample_independent(self, study, trial, param_name, param_distribution):
        return self._tpe.sample_independent(study, trial, param_name, param_distribution)

    def before_trial(self, study, trial) -> None:
        self._tpe.before_trial(study, trial)

    def after_trial(self, study, trial, state, values) -> None:
        self._tpe.after_trial(study, trial, state, values)

    def sample_relative(self, study, trial, search_space):
        if set(SPEC_PARAMS) <= set(search_space) and self._rng.random() < self._local_prob:
            move = self._local_move(study)
            if move is not None:
                start, spec = move
                study._storage.set_trial_system_attr(trial._trial_id, self.LOCAL_FROM, list(start))
                return dict(zip(SPEC_PARAMS, spec))
        return self._tpe.sample_relative(study, trial, search_space)

    # -- local moves --------------------------------------------------------------------------------
    def _local_move(self, study):
        from optuna.trial import TrialState

        trials = study.get_trials(deepcopy=False)
        tried: set[tuple] = set()
        measured = []
        for t in trials:
            eff = t.user_attrs.get("effective")
            if eff:
                tried.add((eff["num_steps"], eff["eagle_topk"], eff["num_draft_tokens"]))
            if all(p in t.params for p in SPEC_PARAMS):
                tried.add(tuple(t.params[p] for p in SPEC_PARAMS))
            feasible = all(v <= 0 for v in t.constraints.values())
            if t.state == TrialState.COMPLETE and eff and feasible and t.values:
                measured.append(t)
        if not measured:
            return None
        n = len(study.directions)
        bests = [_effective(max(measured, key=lambda t, i=i: t.values[i])) for i in range(n)]
        for i in [(self._turn + j) % n for j in range(n)]:
            top = max(t.values[i] for t in measured)
            # Measurements are noisy: any setting within the tolerance of the best may be the real
            # best, so each takes its turn as the centre (the best first).
            near = sorted((t for t in measured if t.values[i] >= top * (1 - self._center_tolerance)),
                          key=lambda t: -t.values[i])
            for best in near:
                center = _effective(best)
                moves = [m for m in self._neighbours(center) if m not in tried]
                if not moves:
                    continue
                self._turn = i + 1
                came_from = best.system_attrs.get(self.LOCAL_FROM)
                again = self._repeat(tuple(came_from), center) if came_from else None
                if again in moves:
                    return center, again
                # Away from the other objectives' best settings first: each objective's optimum
                # sits at one end of the front (large trees for single requests, small under load).
                others = [b for j, b in enumerate(bests) if j != i and b != center]
                self._rng.shuffle(moves)
                moves.sort(key=lambda m: -sum(_away(center, m, o) for o in others))
                return center, moves[0]
        return None

    def _repeat(self, start: tuple, end: tuple) -> tuple | None:
        """``end`` moved once more the way ``start`` moved to it, or None."""
        s, k, d = end
        s2 = s + (end[0] - start[0])
        k2 = k * k // start[1] if start[1] and k * k % start[1] == 0 else k
        d2 = round(d * d / start[2]) if start[2] else d
        return self._valid((s2, k2, d2))

    def _neighbours(self, spec: tuple) -> list[tuple]:
        s, k, d = spec
        steps, topks = self._grid[SPEC_PARAMS[0]], self._grid[SPEC_PARAMS[1]]
        out = set()
        for values, index in ((steps, 0), (topks, 1)):
            pos = values.index(spec[index]) if spec[index] in values else None
            for j in ((pos - 1, pos + 1) if pos is not None else ()):
                if 0 <= j < len(values):
                    out.add(tuple(values[j] if x == index else spec[x] for x in range(3)))
        out.update({(s, k, round(d * self._draft_factor)), (s, k, round(d / self._draft_factor))})
        valid = {self._valid(m) for m in out}
        return sorted(m for m in valid if m is not None and m != spec)

    def _valid(self, spec: tuple) -> tuple | None:
        """The effective setting of ``spec`` within the space, shrinking a tree too large for its
        steps and topk (``candidate_count``, eagle_utils.py) to the largest SGLang accepts."""
        s, k, d = spec
        drafts = self._grid[SPEC_PARAMS[2]]
        if s not in self._grid[SPEC_PARAMS[0]] or k not in self._grid[SPEC_PARAMS[1]]:
            return None
        d = min(max(d, drafts[0]), drafts[-1], candidate_count(s, k) + 1)
        d = max((v for v in drafts if v <= d), default=None)
        if d is None:
            return None
        res = resolve(SpecConfig(s, k, d))
        if not res.ok:
            return None
        # topk 1: SGLang runs steps + 1 draft tokens whatever is asked; ask for exactly that.
        e = res.effective
        return (e.num_steps, e.eagle_topk, e.num_draft_tokens) if e.num_draft_tokens in drafts else None
