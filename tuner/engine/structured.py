"""The default sampler (``auto``): a search that knows the problem's structure and its own noise.

:class:`StructuredSampler` is an Optuna ``BaseSampler``: Optuna stays the study's interface, storage
and record of every trial. The seed trials come first (queued by the engine); then every proposal
is one of two moves, whichever is worth more to the setting ``tuner study export`` would return:

* **explore**: launch a setting never measured;
* **re-measure**: launch a setting measured before once more (the trial carries
  :data:`tuner.engine.trial.REMEASURE_ATTR`, so the engine launches it rather than reusing the first
  measurement, and the readers -- status, pareto, export -- take the mean of its readings,
  :func:`tuner.engine.records.merge_repeats`).

How a move is valued (:mod:`tuner.engine.lookahead`, on beliefs from :mod:`tuner.engine.surrogate`):
one Gaussian process of log accept length (exact: a server averages it over thousands of verify
steps) and one per objective of log relative step time (accept length over speedup: the noisy
part), over features of the tree SGLang verifies. A move's value is the expected gain in the true
value of the export's pick after its reading (a one-step look-ahead of export's own rule: the best
mean reading), plus, while launches remain (``horizon``), ``explore_weight`` times a new setting's
expected improvement over the best believed value -- counted in full near the settings each
objective believes best (``local_radius`` lattice steps of steps, topk and the draft-token ladder
around ``centres`` of them) and at ``global_weight`` elsewhere, where a dozen readings say little.
Values are summed over the objectives: launches go to the objective furthest from settled, and a
move may change all three flags at once. On the last ``confirm`` launches, an export pick the model
disputes, or the setting the model believes better than it -- whichever reading the look-ahead values
more -- is measured again first (:mod:`tuner.engine.settle`).

Candidates: the valid effective settings of the space (SGLang's rules with the space's fixed
arguments; on a landscape table, those it lists: ``listed``, each tree then launchable first), one
per verified tree (:func:`tuner.sglang.trees.cheapest_per_tree`: a setting that
verifies the same tree as a cheaper one is never launched), draft tokens on a ladder for a first
launch (:func:`draft_ladder`), never a tree measured before or being measured by another worker
(re-measurements apart), never a setting that failed at launch nor, when its failure may come of
its size (:data:`NOT_OF_ITS_SIZE`: ``oom`` above all), one at least as large in all three flags
(memory grows with each).

``hedge`` (GP-Hedge; 0, the default: off, and every proposal is the one above): after the seeds,
and apart from the last launches' disputes, three rules (:data:`HEDGE_RULES`: the value above, the
expected improvement of a new setting alone, the look-ahead alone) each nominate a move, and one is
drawn with the seeded generator, a rule's odds ``exp(hedge x gain)``, its gain the model's current
belief at the settings it nominated before (stored on the trials, :data:`HEDGE_ATTR`).

The noise is estimated from the study's own repeated readings (pooled variance of the log readings
around each setting's mean), starting from ``noise`` (relative, 3%) worth ``noise_weight`` readings.
Deterministic: the same seed and the same trials give the same proposal.

Why one module of about 530 lines: it is the sampler's state and its one decision (Optuna's
interface, the candidates, the readings, the proposal, the hedge's draw among its rules), which share
that state; the arithmetic the decision uses already lives in its own modules (lookahead, surrogate,
settle).
"""

from __future__ import annotations

import inspect
import math
import random
from dataclasses import dataclass, field

import numpy as np

from ..config.sampler import MAX_HEDGE, MAX_LOCAL_DOUBT
from ..config.space import SPEC_PARAMS, SearchSpace
from ..sglang.rules import SpecConfig
from ..sglang.trees import cheapest_per_tree, tree_key
from .lookahead import hedge_odds, improvement_values, move_values
from .settle import disputed, unconfirmed_pick
from .surrogate import Difference, expected_improvement, features, fit, fit_rows, one_blas_thread


def _optuna_base():
    from optuna.samplers import BaseSampler

    return BaseSampler


#: Failure classes (README, "Failure classes") that come of the node, the network or the server's
#: health, not of the setting's size: such a failure rules out its own tree, not every setting at
#: least as large in all three flags (QA: a seed trial (3, 1, 4) whose NCCL setup timed out, or whose
#: server hung, ruled out every deeper or wider tree for the rest of the night). Every other class --
#: ``oom``, ``spec_runtime`` (a tree larger than its candidates), ``invalid_args``, a landscape
#: table's ``not_in_landscape`` (a table leaves out what does not fit) -- rules out the larger ones.
NOT_OF_ITS_SIZE = frozenset({"nccl", "hung", "startup_timeout", "crash_after_ready", "other", "request_errors",
                             "bad_response", "args_unverified", "args_mismatch"})

#: ``hedge``'s rules, in the order their nominees are stored: the default's value (look-ahead plus
#: explore term), the expected improvement of a new setting alone, the look-ahead alone
HEDGE_RULES = ("value", "improvement", "look-ahead")
#: A trial's system attribute holding what each of :data:`HEDGE_RULES` nominated for it (tree keys,
#: None where a rule had none): the rules' gains are read back from the trials, so a proposal stays a
#: function of the seed and the trials
HEDGE_ATTR = "tuner:hedge"


@dataclass
class Readings:
    """What the study has measured, by verified tree (the effective settings behind each)."""

    values: dict = field(default_factory=dict)  #: tree key -> list of value vectors (feasible readings)
    accept: dict = field(default_factory=dict)  #: tree key -> list of accept lengths (None: not reported)
    spec: dict = field(default_factory=dict)  #: tree key -> the effective setting measured
    failed: set = field(default_factory=set)  #: effective settings that failed at launch (of their size)
    #: tree keys of settings that failed for a reason not of their size (:data:`NOT_OF_ITS_SIZE`)
    failed_alone: set = field(default_factory=set)
    busy: set = field(default_factory=set)  #: tree keys another trial is measuring now
    #: tree keys pruned (:func:`read_pruned`): never proposed again
    pruned: set = field(default_factory=set)
    #: tree keys measured but breaking the study's limits (SLOs, an enforced lossless check): their
    #: readings teach the model, but export never picks them, so they are not measured again
    infeasible: set = field(default_factory=set)
    #: tree key -> per reading, the most a limit is broken by (``slo:...`` and lossless
    #: constraints: above 0 broken); empty when the study has no limits
    limits: dict = field(default_factory=dict)
    #: tree keys measured with a figure of 0 or less (``goodput@C`` when no request met the limits):
    #: the model of log figures cannot take them, but the tree was measured, so it is never
    #: proposed again (the engine would only reuse the measurement, proposal after proposal)
    unmodelled: set = field(default_factory=set)
    #: effective settings (:func:`~tuner.engine.records.spec_key`) measured, failed or pruned: the
    #: engine would only reuse them (:meth:`StructuredSampler.untried`)
    tried: set = field(default_factory=set)
    launched: int = 0
    #: ``hedge``: per earlier proposal, the setting (tree key) each rule nominated, None where a rule
    #: had none (:data:`HEDGE_ATTR` on its trial)
    nominees: list = field(default_factory=list)
    #: ``hedge``: what this proposal's rules nominated, set by :meth:`StructuredSampler.propose`
    #: when the hedge chose (None otherwise), for :meth:`~StructuredSampler.sample_relative` to store
    nominated: list | None = None

    def mean(self, key) -> np.ndarray:
        return np.mean(np.log(np.asarray(self.values[key])), axis=0)


def read_trials(trials, space: SearchSpace, current: int) -> Readings:
    """The readings of finished trials (feasible measured ones; failed launches apart; a reading
    with a figure of 0 or less only marks its tree measured, :attr:`Readings.unmodelled`). A finished
    trial whose stored attributes the readers cannot use (:func:`~tuner.engine.records.attrs_problem`)
    is not read at all."""
    from optuna.trial import TrialState

    from .records import CONSTRAINT, FAILED, MEASURED, attrs_problem, spec_from_dict, spec_from_params, spec_key

    out = Readings()
    pruned = []
    for t in trials:
        nominated = t.system_attrs.get(HEDGE_ATTR) if t.number != current else None
        if isinstance(nominated, list) and len(nominated) == len(HEDGE_RULES):
            out.nominees.append([tuple(k) if isinstance(k, list) and len(k) == 3 else None for k in nominated])
        if t.state != TrialState.RUNNING and attrs_problem(t.user_attrs) is not None:
            # what the readers show as unreadable (records.attrs_problem: a figure edited by hand to
            # NaN, inf or text) is no reading: its setting may be measured again. QA (qa125): an
            # accept_length of NaN ended `tuner study run` in scikit-learn's "Input y contains NaN",
            # of "abc" in a TypeError, on SQLite and PostgreSQL alike
            continue
        eff = spec_from_dict(t.user_attrs.get("effective"))
        status = t.user_attrs.get("status")
        if t.state == TrialState.RUNNING and t.number != current:
            spec = eff
            if spec is None and all(p in t.params for p in SPEC_PARAMS):
                res = space.resolve(spec_from_params(t.params))
                spec = res.effective if res.ok else None
            if spec is not None:
                out.busy.add(tree_key(spec))
            continue
        if t.state == TrialState.PRUNED and eff is not None:
            pruned.append((t, eff))  # read once every whole measurement is in
            out.tried.add(spec_key(eff))
            continue
        if t.state != TrialState.COMPLETE or eff is None:
            continue
        if status in (MEASURED, FAILED):
            out.launched += 1
            out.tried.add(spec_key(eff))
        if status == MEASURED and t.values and all(v > 0 for v in t.values):
            key = tree_key(eff)
            out.values.setdefault(key, []).append(list(t.values))
            out.accept.setdefault(key, []).append(t.user_attrs.get("accept_length"))
            out.spec.setdefault(key, eff)
            limits = [v for name, v in t.constraints.items() if name != CONSTRAINT]
            if limits:
                out.limits.setdefault(key, []).append(max(limits))
            if any(v > 0 for v in t.constraints.values()):
                out.infeasible.add(key)
        elif status == MEASURED and t.values:
            out.unmodelled.add(tree_key(eff))
            limits = [v for name, v in t.constraints.items() if name != CONSTRAINT]
            if limits:  # how far it broke the limits still teaches the feasibility model
                out.limits.setdefault(tree_key(eff), []).append(max(limits))
        elif status == FAILED and t.user_attrs.get("failure_class") in NOT_OF_ITS_SIZE:
            out.failed_alone.add(tree_key(eff))
        elif status == FAILED:
            out.failed.add(eff)
    for t, eff in pruned:
        read_pruned(out, t, eff)
    return out


def read_pruned(out: Readings, t, eff: SpecConfig) -> None:
    """A pruned trial (tuner.engine.pruning): its setting is never proposed again (the engine would
    not launch it: a repeat is told PRUNED at once), and its last partial estimates teach the model
    like a reading that breaks the study's limits -- never picked, never measured again. They are
    dominated by the front beyond the noise, so the model learns that the region is poor. Read after
    the whole measurements: a tree measured whole through another of its settings keeps its
    readings (and stays pickable)."""
    from .pruning import last_estimates
    from .records import launched

    key = tree_key(eff)
    out.pruned.add(key)
    if launched(t.user_attrs.get("status"), t.user_attrs):
        out.launched += 1
    if key in out.values and key not in out.infeasible:
        return  # the same tree measured whole (another setting of it): that reading stands
    estimates = last_estimates(t.user_attrs)
    # One estimate per objective, as every reading has (a measured trial's values: Optuna keeps one per
    # direction); a stage edited by hand to more or fewer is no reading of them (QA, qa191: one estimate in
    # a two-objective study ended every later run in numpy's "inhomogeneous shape" ValueError)
    width = next((len(v) for vs in out.values.values() for v in vs), None)
    if estimates and (width is None or len(estimates) == width) \
            and all(isinstance(v, (int, float)) and v > 0 for v in estimates):
        out.values.setdefault(key, []).append([float(v) for v in estimates])
        out.accept.setdefault(key, []).append((t.user_attrs.get("partial") or {}).get("accept_length"))
        out.spec.setdefault(key, eff)
        out.infeasible.add(key)


def draft_ladder(values) -> set[int]:
    """The draft-token counts worth a first launch: every one up to 8 (small trees, where one
    token more changes the verified tree's shape), then multiples of 4 up to 32, of 8 up to 64 and
    of 16 beyond, and the space's smallest and largest. Large trees change slowly with their size
    (a 1% step is lost in the noise), while GPU kernels work in tiles and CUDA graphs in captured
    batch sizes of such multiples, so the steps of a landscape sit at them."""
    def step(v: int) -> int:
        return 1 if v <= 8 else 4 if v <= 32 else 8 if v <= 64 else 16

    values = sorted(values)
    return {v for v in values if v % step(v) == 0} | {values[0], values[-1]}


class StructuredSampler(_optuna_base()):
    """See the module docstring. ``space``: the study's :class:`SearchSpace`. The study's stored
    budget (``budget.n_trials``) tells how many launches remain: in the last ``horizon`` of them a
    first reading of a new setting is worth less (it could not be confirmed)."""

    def __init__(self, space: SearchSpace, seed: int | None = None, noise: float = 0.03, noise_weight: float = 4.0,
                 explore_weight: float = 0.5, horizon: float = 3, shortlist: int = 48, global_weight: float = 0.3,
                 centres: int = 2, local_radius: tuple = (2, 1, 2), confirm: int = 1, local_doubt: float = 0.06,
                 dispute: bool = True, hedge: float = 0.0, listed=None):
        from optuna.samplers import RandomSampler

        if (not 0 < noise < 1 or noise_weight < 0 or explore_weight < 0 or horizon <= 0 or shortlist < 1
                or not 0 <= global_weight <= 1 or centres < 1 or len(local_radius) != 3 or min(local_radius) < 0
                or not 0 <= local_doubt <= MAX_LOCAL_DOUBT or not 0 <= hedge <= MAX_HEDGE):
            raise TypeError("noise must lie in (0, 1), global_weight in [0, 1], local_doubt in [0, 1], hedge in "
                            f"[0, {MAX_HEDGE:g}]; noise_weight, explore_weight and local_radius (three lattice steps) "
                            ">= 0; horizon > 0; shortlist and centres >= 1")
        self._space = space
        self._seed = seed if seed is not None else random.SystemRandom().randrange(2**31)
        self._noise, self._noise_weight = noise, noise_weight
        self._explore_weight, self._horizon, self._shortlist = explore_weight, horizon, int(shortlist)
        self._global_weight, self._centres, self._radius = global_weight, int(centres), tuple(local_radius)
        self._confirm, self._local_doubt, self._dispute = int(confirm), float(local_doubt), bool(dispute)
        self._hedge = float(hedge)
        self._random = RandomSampler(seed=self._seed)
        # ``listed``: a landscape table's grid; its cheapest setting per tree stands for the tree. A
        # table that lists every setting of the space (a model's) is the space itself
        effective = space.effective_configs()
        if listed is not None and set(effective) <= set(listed):
            listed = None
        self._listed = None if listed is None else frozenset(listed)
        cheapest = cheapest_per_tree([spec for spec in effective if listed is None or spec in listed])
        self._keys = sorted(cheapest)
        self._specs = [cheapest[k] for k in self._keys]
        top = [max(space.values(name)) for name in SPEC_PARAMS]
        self._x = features(self._specs, *top)
        self._index = {k: i for i, k in enumerate(self._keys)}
        ladder = sorted(draft_ladder(space.values(SPEC_PARAMS[2])))
        # a grid's draft-token counts are the ladder a node was measured on: each tree may be launched first
        self._explorable = {i for i, spec in enumerate(self._specs)
                            if listed is not None or spec.num_draft_tokens in ladder}
        steps, topks = sorted(space.values(SPEC_PARAMS[0])), sorted(space.values(SPEC_PARAMS[1]))
        # lattice positions: the index of each flag among the values a first launch may take
        self._lattice = np.array([(np.interp(sp.num_steps, steps, range(len(steps))),
                                   np.interp(math.log(sp.eagle_topk), np.log(topks), range(len(topks))),
                                   np.interp(math.log(sp.num_draft_tokens), np.log(ladder), range(len(ladder))))
                                  for sp in self._specs])

    # -- Optuna's sampler interface ----------------------------------------------------------------
    def reseed_rng(self) -> None:
        self._seed = random.SystemRandom().randrange(2**31)
        self._random.reseed_rng()

    def infer_relative_search_space(self, study, trial):
        return self._space.distributions()

    def sample_independent(self, study, trial, param_name, param_distribution):
        return self._random.sample_independent(study, trial, param_name, param_distribution)

    def sample_relative(self, study, trial, search_space):
        if not set(SPEC_PARAMS) <= set(search_space):
            return {}
        from .study import stored_budget

        readings = read_trials(study.get_trials(deepcopy=False), self._space, trial.number)
        budget = stored_budget(study)
        choice = self.propose(readings, trial.number, None if budget is None else budget - readings.launched)
        if choice is None:
            choice = self.untried(readings, trial.number)
        if choice is None:
            return {}  # every setting tried: Optuna's random sampler (the runner stops on its own)
        spec, again, why = choice
        from .trial import PROPOSAL_ATTR, REMEASURE_ATTR

        storage = study._storage
        storage.set_trial_system_attr(trial._trial_id, PROPOSAL_ATTR, why)
        if again:
            storage.set_trial_system_attr(trial._trial_id, REMEASURE_ATTR, True)
        if readings.nominated is not None:
            storage.set_trial_system_attr(trial._trial_id, HEDGE_ATTR,
                                          [None if k is None else list(k) for k in readings.nominated])
        return dict(zip(SPEC_PARAMS, (spec.num_steps, spec.eagle_topk, spec.num_draft_tokens)))

    def untried(self, readings: Readings, number: int):
        """``(setting, False, why)``: a setting never tried, at random, for when :meth:`propose` has
        nothing to launch (every setting left is larger than one that failed at launch, or off the
        draft ladder, or too few readings and none open); one whose tree was never measured if
        there is one, else another setting of a measured tree (its reading is a second reading of
        the tree); None once every setting was tried. Optuna's random sampler, the fallback before,
        drew mostly settings measured already, each a trial told REUSED at once: QA, a study of 12
        launches on a space of 11 settings, most of them out of memory, asked 70 trials.

        On a landscape table's grid (``listed``) only its settings: once each was tried, one of them
        again (a trial told REUSED, no launch; a run ends before, :mod:`tuner.engine.runner`'s "every
        setting the landscape table lists has been tried"), never a setting the table does not list (QA, qa133: on a grid of one row every
        trial after it was such a setting, a failed launch ``not_in_landscape``, the whole budget)."""
        from .records import spec_key

        grid = [s for s in self._space.effective_configs() if self._listed is None or s in self._listed]
        left = [s for s in grid if spec_key(s) not in readings.tried and tree_key(s) not in readings.busy]
        seen = set(readings.values) | readings.unmodelled | readings.pruned
        new = [s for s in left if tree_key(s) not in seen]
        pool = new or left
        if not pool and self._listed is not None and grid:
            spec = grid[int(np.random.default_rng([self._seed, number, 2]).integers(len(grid)))]
            return spec, False, "the grid is exhausted: every setting the landscape table lists was tried"
        if not pool:
            return None
        spec = pool[int(np.random.default_rng([self._seed, number, 1]).integers(len(pool)))]
        return spec, False, "explore: nothing the model would launch is left; a setting never tried"

    # -- the decision -----------------------------------------------------------------------------
    def noise_var(self, readings: Readings) -> float:
        """Variance of one log reading: the prior, updated by the spread of repeated readings. With
        ``noise_weight`` 0 the repeats alone, once there are any; the prior until then (QA: a study
        with ``noise_weight: 0`` crashed at its first proposal after the seeds, dividing by zero)."""
        ss, dof = 0.0, 0
        for vals in readings.values.values():
            if len(vals) > 1:
                logs = np.log(np.asarray(vals))
                ss += float(np.sum((logs - logs.mean(axis=0)) ** 2))
                dof += (len(vals) - 1) * logs.shape[1]
        prior = math.log1p(self._noise) ** 2
        if self._noise_weight + dof == 0:
            return prior
        return (self._noise_weight * prior + ss) / (self._noise_weight + dof)

    def open_candidates(self, readings: Readings) -> list[int]:
        """Indices of candidates worth launching for the first time."""
        out = []
        for i, (key, spec) in enumerate(zip(self._keys, self._specs)):
            if (i not in self._explorable or key in readings.values or key in readings.busy
                    or key in readings.pruned or key in readings.unmodelled or key in readings.failed_alone):
                continue
            if any(spec.num_steps >= f.num_steps and spec.eagle_topk >= f.eagle_topk
                   and spec.num_draft_tokens >= f.num_draft_tokens for f in readings.failed):
                continue
            out.append(i)
        return out

    def beliefs(self, readings: Readings, measured: list, noise_var: float) -> list:
        """One belief per objective about its log value at every candidate.

        With accept lengths reported for every measured setting (they are nearly exact: a server
        averages them over thousands of verify steps), a speedup is modelled as accept length over
        relative step time: one model of log accept length shared by the objectives, and one model
        per objective of log accept length minus log reading (the step time relative to the
        baseline's). Otherwise each objective's log readings are modelled directly."""
        rows, ys, accepts = [], [], []
        for k in measured:
            for v, a in zip(readings.values[k], readings.accept[k]):
                rows.append(self._index[k])
                ys.append(np.log(v))
                accepts.append(a)
        keep = fit_rows(np.asarray(ys))  # bounded: a study of thousands of launches (surrogate.MAX_FIT_READINGS)
        rows, ys, accepts = [rows[i] for i in keep], [ys[i] for i in keep], [accepts[i] for i in keep]
        x, y = self._x[rows], np.asarray(ys)
        if any(a is None or a < 1 for a in accepts):
            return [fit(x, y[:, o], self._x, noise_var) for o in range(y.shape[1])]
        log_a = np.log(np.asarray(accepts, dtype=float))
        accept = fit(x, log_a, self._x, 1e-5)
        return [Difference(accept, fit(x, log_a - y[:, o], self._x, noise_var)) for o in range(y.shape[1])]

    def near_the_best(self, beliefs, measured: np.ndarray, open_: np.ndarray) -> set[int]:
        """Open candidates within ``local_radius`` lattice steps (steps, topk, draft-token ladder)
        of the measured settings each objective believes best: a surrogate fitted to a dozen
        readings is trusted near them more than far away."""
        radius = np.array(self._radius)
        out: set[int] = set()
        for b in beliefs:
            for c in measured[np.argsort(-b.mean[measured])[:self._centres]]:
                near = np.all(np.abs(self._lattice[open_] - self._lattice[c]) <= radius + 1e-9, axis=1)
                out.update(int(i) for i in open_[near])
        return out

    def feasibility(self, readings: Readings, seen: list) -> np.ndarray | None:
        """The probability that each candidate meets the study's limits (a model of the most a
        limit is broken by, from every measured setting, those read at 0 too), or None for a study
        without limits."""
        if not readings.limits:
            return None
        from scipy.stats import norm

        rows, ys = [], []
        for k in [*seen, *(k for k in readings.unmodelled if k in self._index and k not in seen)]:
            for v in readings.limits.get(k, []):
                rows.append(self._index[k])
                ys.append(v)
        if not rows:
            return None
        keep = fit_rows(-np.asarray(ys, dtype=float))  # the least broken first, as beliefs keeps the best
        belief = fit(self._x[[rows[i] for i in keep]], np.asarray(ys, dtype=float)[keep], self._x, 1e-4)
        return norm.cdf(-belief.mean / np.maximum(belief.sd, 1e-6))

    def propose(self, readings: Readings, number: int, remaining: int | None = None):
        """``(setting, re-measure?, why)`` for the next trial, or None (Optuna's random sampler
        then). ``remaining``: launches left in the study's budget (None: no budget). BLAS on one
        thread meanwhile (:func:`one_blas_thread`)."""
        with one_blas_thread():
            return self._propose(readings, number, remaining)

    def _propose(self, readings: Readings, number: int, remaining: int | None):
        rng = np.random.default_rng([self._seed, number])
        open_ = np.array(self.open_candidates(readings), dtype=int)
        seen = [k for k in readings.values if k in self._index]  # every reading teaches the model
        if len(seen) < 3:
            if not len(open_):
                return None
            # where the limits are known to break (a goodput of 0 is no reading), a setting that
            # likely meets them; else readings could stay too few, launch after launch
            p = self.feasibility(readings, seen)
            likely = open_ if p is None else open_[p[open_] >= 0.5]
            if len(likely) < len(open_) and len(likely):
                return (self._specs[int(rng.choice(likely))], False,
                        "too few readings: a random setting the limits likely allow")
            return self._specs[int(rng.choice(open_))], False, "too few readings: a random setting"
        noise_var = self.noise_var(readings)
        beliefs = self.beliefs(readings, seen, noise_var)
        feasible = self.feasibility(readings, seen)
        measured = [k for k in seen if k not in readings.infeasible]  # what export may pick
        if not measured:
            if not len(open_):
                return None
            best = [float(b.mean[[self._index[k] for k in seen]].max()) for b in beliefs]
            ei = np.max([expected_improvement(b.mean[open_], b.sd[open_], m) for b, m in zip(beliefs, best)], axis=0)
            i = int(open_[int(np.argmax(ei * feasible[open_]))])
            return self._specs[i], False, "explore: no setting measured meets the study's limits yet"
        m_idx = np.array([self._index[k] for k in measured])
        means = np.array([readings.mean(k) for k in measured])
        counts = np.array([len(readings.values[k]) for k in measured])
        busy = [k in readings.busy for k in measured]  # another worker measures it now
        if remaining is not None and remaining <= self._confirm:
            if self._dispute:
                pair = disputed([b.mean[m_idx] for b in beliefs], means, busy)
                j = None
                if pair:  # the disputed setting whose next reading is worth most to export's picks
                    worth = move_values(beliefs, m_idx, means, counts, m_idx[pair], noise_var, 0.0)
                    j = pair[int(np.argmax(worth))]
                why = "re-measure: the model disputes an export pick"
            else:
                j = unconfirmed_pick(means, counts, noise_var, busy)
                why = "re-measure: an export pick rests on one reading"
            if j is not None:
                return readings.spec[measured[j]], True, why
        weight = self._explore_weight
        if remaining is not None:
            weight *= min(1.0, max(0.0, (remaining - 1) / self._horizon))
        moves = list(m_idx)
        scale = doubt = np.ones(0)
        if len(open_):
            ei = np.max([expected_improvement(b.mean[open_], b.sd[open_], float(b.mean[m_idx].max()))
                         for b in beliefs], axis=0)
            local = self.near_the_best(beliefs, m_idx, open_)
            far = [int(c) for c in open_[np.argsort(-ei)[:self._shortlist]] if int(c) not in local]
            moves += sorted(local) + far
            scale = np.array([1.0] * len(local) + [self._global_weight] * len(far))
            doubt = np.array([self._local_doubt] * len(local) + [0.0] * len(far))
        moves = np.array(moves, dtype=int)
        scale = np.concatenate([np.ones(len(m_idx)), scale])
        doubt = np.concatenate([np.zeros(len(m_idx)), doubt])
        values = move_values(beliefs, m_idx, means, counts, moves, noise_var, weight, scale, doubt)
        rules = [values]
        if self._hedge > 0:
            rules += [improvement_values(beliefs, m_idx, moves, doubt),
                      move_values(beliefs, m_idx, means, counts, moves, noise_var, 0.0)]
        for rule in rules:
            if feasible is not None:  # a new setting counts only if it meets the limits
                rule[len(m_idx):] *= feasible[moves[len(m_idx):]]
            rule[:len(m_idx)][busy] = -np.inf
        if not np.isfinite(values).any():
            return None
        best, hedged = int(np.argmax(values)), ""
        if self._hedge > 0:
            best, hedged = self._hedge_pick(readings, beliefs, rules, moves, rng)
        again = best < len(m_idx)
        spec = readings.spec[measured[best]] if again else self._specs[int(moves[best])]
        what = "re-measure" if again else "explore"
        return spec, again, f"{what}{hedged}: expected gain {values[best]:.4f} (noise {math.sqrt(noise_var):.3f})"

    def _hedge_pick(self, readings: Readings, beliefs, rules: list, moves: np.ndarray, rng):
        """GP-Hedge (``hedge``: its eta): each rule of :data:`HEDGE_RULES` nominates its best move;
        one nominee is drawn with :func:`~tuner.engine.lookahead.hedge_odds`, a rule's gain the sum
        over the objectives of the model's current mean at every setting it nominated at earlier
        proposals (:attr:`Readings.nominees`). Records this proposal's nominees on ``readings``.
        ``(index into moves, why)``."""
        nominees = [int(np.argmax(r)) if np.isfinite(r).any() else None for r in rules]
        readings.nominated = [None if j is None else self._keys[int(moves[j])] for j in nominees]
        total = np.sum([b.mean for b in beliefs], axis=0)
        gains = np.zeros(len(rules))
        for earlier in readings.nominees:
            for r, key in enumerate(earlier):
                if key is not None and key in self._index:
                    gains[r] += total[self._index[key]]
        able = [r for r, j in enumerate(nominees) if j is not None]
        odds = hedge_odds(gains[able], self._hedge)
        r = able[int(rng.choice(len(able), p=odds))]
        return nominees[r], f" (hedge: {HEDGE_RULES[r]}, odds {odds[able.index(r)]:.2f})"


#: ``auto``'s options and their defaults, read from :class:`StructuredSampler`'s keyword arguments so
#: they are written once (chosen on the training landscapes; the study file's ``sampler.options`` may
#: override each, checked by :class:`tuner.config.sampler.AutoOptions`, which a test keeps in step)
STRUCTURED_OPTIONS = {name: p.default for name, p in inspect.signature(StructuredSampler).parameters.items()
                      if p.default is not inspect.Parameter.empty and name not in ("seed", "listed")}
