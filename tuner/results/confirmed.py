"""What a confirmation run says: confirmed means with 95% intervals, and the picks they support.

Reads the companion study ``NAME.confirm`` written by :func:`tuner.engine.confirm.run_confirmation`
(the latest run; earlier runs stay stored). Definitions:

* **paired ratios**: in round r, a candidate's figure (single-request tok/s, aggregate tok/s at C)
  over the baseline's figure of the same round; drift of the machine between rounds cancels. A
  speedup objective's confirmed value is the mean of its paired ratios, with the 95% interval of
  that mean (Student t over the rounds). Absolute objectives (``tok_per_s@C``, ``goodput@C``, ...)
  use the candidate's own values.
* **vs the baseline** at a concurrency: ``gain`` when the interval of the speedup lies above 1.0,
  ``loss`` when it lies below, ``within noise`` when it includes 1.0.
* **equal within noise**: two candidates whose paired per-round difference on an objective has a
  95% interval that includes 0. Among the candidates equal within noise to the best one, the
  cheapest wins: fewer draft tokens, then smaller topk, then fewer steps (less verify work, less
  memory, and the same measured figures).
* **picks**: ``single`` and ``throughput`` maximize their objective's confirmed mean, then the
  cheapest within noise; ``knee`` is the knee (:func:`tuner.results.pareto.knee_index`) of the
  confirmed means of the candidates not dominated by another candidate, then the cheapest
  candidate equal within noise to it on every objective.
* **no safe improvement** (``--min-speedup-c32 X``): a candidate whose speedup@32 interval lies
  entirely below X loses to what the user protects beyond noise; when every candidate does,
  :class:`tuner.results.pareto.PickError` says so (the CLI exits 1).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timezone
from typing import Any, Sequence

from ..bench.stats import figure
from ..config.study import objective_concurrency
from ..config.wording import counted
from ..engine.confirm import BASELINE, measured_from, open_confirm_study
from ..engine.records import MEASURED, attrs_problem, load_records, spec_from_dict
from ..sglang.rules import SpecConfig
from .pareto import C32, PICKS, PickError, knee_index, single_objective, throughput_objective


@dataclass(frozen=True)
class Interval:
    """A confirmed mean with its 95% interval (``lo``/``hi`` None with fewer than 2 rounds)."""

    mean: float
    lo: float | None
    hi: float | None
    n: int

    @classmethod
    def of(cls, values: Sequence[float]) -> "Interval | None":
        fig = figure(values)
        if fig is None:
            return None
        if fig.rel_ci95 is None:
            half = 0.0 if fig.sd == 0 else None
        else:
            half = fig.rel_ci95 * abs(fig.mean)
        if half is None:
            return cls(fig.mean, None, None, fig.n)
        return cls(fig.mean, fig.mean - half, fig.mean + half, fig.n)

    def includes(self, x: float) -> bool:
        return self.lo is None or self.lo <= x <= self.hi

    def text(self, digits: int = 3, unit: str = "") -> str:
        if self.lo is None:
            return f"{self.mean:.{digits}f}{unit} (n={self.n})"
        return f"{self.mean:.{digits}f}{unit} [{self.lo:.{digits}f}, {self.hi:.{digits}f}]"

    def to_dict(self) -> dict:
        return {"mean": self.mean, "ci95": [self.lo, self.hi], "n": self.n}


@dataclass
class ConfirmedCandidate:
    trial: int
    spec: SpecConfig
    picks: list[str]  #: the picks it stood for when the run began
    rounds: int  #: rounds with both it and the baseline measured
    values: dict[str, Interval]  #: objective -> confirmed value
    speedups: dict[int, Interval]  #: concurrency -> paired speedup of aggregate tok/s
    single_speedup: Interval | None
    per_round: dict[str, dict[int, float]] = field(default_factory=dict)  #: objective -> round -> value

    @property
    def cost(self) -> tuple[int, int, int]:
        s = self.spec
        return (s.num_draft_tokens, s.eagle_topk, s.num_steps)

    def versus_baseline(self, concurrency: int) -> str | None:
        iv = self.speedups.get(concurrency)
        if iv is None:
            return None
        if iv.lo is None or iv.includes(1.0):
            return "within noise"
        return "gain" if iv.lo > 1.0 else "loss"


@dataclass
class Confirmation:
    run: str
    #: when its first repeat started, ISO 8601 in UTC (``+00:00``), whoever reads it where
    started_at: str | None
    rounds: int  #: rounds with a baseline measurement
    objectives: list[str]
    candidates: list[ConfirmedCandidate]
    baseline_values: dict[str, Interval]  #: absolute figures of the baseline over the rounds
    failed: int
    picks: dict[str, ConfirmedCandidate]  #: pick name -> chosen candidate
    why: dict[str, str]  #: pick name -> how it was chosen
    concurrencies: list[int]

    def candidate(self, trial: int) -> ConfirmedCandidate | None:
        return next((c for c in self.candidates if c.trial == trial), None)


def _figure_value(attrs: dict, name: str) -> float | None:
    """The absolute figure behind an objective (the objective's own value when absolute)."""
    if name in ("single_speedup", "single_tok_per_s"):
        return attrs.get("single_tok_per_s")
    c = objective_concurrency(name)
    if name.startswith(("speedup@", "tok_per_s@")):
        return attrs.get(f"tok_per_s@{c}")
    return attrs.get(name)  # goodput@C, goodput_tok_per_s@C


def _is_ratio(name: str) -> bool:
    return "speedup" in name


def load_confirmation(study, min_speedup_c32: float | None = None, run=None) -> Confirmation | None:
    """Confirmation ``run``, or the one that decides (:func:`_deciding_run`); None if never confirmed."""
    cstudy = open_confirm_study(study)
    if cstudy is None:
        return None
    # A measurement whose stored attributes cannot be trusted (edited by hand) counts in no round,
    # as a trial of the study itself would be 'unreadable' (tuner.engine.records.attrs_problem).
    trials = [t for t in cstudy.get_trials(deepcopy=False)
              if isinstance(t.user_attrs.get("run"), str) and attrs_problem(t.user_attrs) is None
              and _who(t.user_attrs) is not None and isinstance(t.user_attrs.get("round"), int)
              and _picks_readable(t.user_attrs)]
    if not trials:
        return None
    run = run or _deciding_run(trials)
    mine = [t for t in trials if t.user_attrs.get("run") == run]
    done = [t for t in mine if t.state.name == "COMPLETE" and t.user_attrs.get("status") == MEASURED]
    objectives = list(study.user_attrs.get("objectives") or [])
    base: dict[int, dict] = {t.user_attrs["round"]: t.user_attrs for t in done if _who(t.user_attrs) == BASELINE}
    # a candidate stands for a trial of the study that is still a measured, readable setting
    standing = {r.number for r in load_records(study) if r.status == MEASURED and r.feasible}
    by_trial: dict[int, dict[int, dict]] = {}
    meta: dict[int, tuple[SpecConfig, list[str]]] = {}
    for t in mine:
        who = _who(t.user_attrs)
        if who == BASELINE or who not in standing:
            continue
        meta.setdefault(who, (spec_from_dict(t.user_attrs.get("effective")), list(t.user_attrs.get("picks") or [])))
    for t in done:
        who = _who(t.user_attrs)
        if who != BASELINE and who in standing:
            by_trial.setdefault(who, {})[t.user_attrs["round"]] = t.user_attrs
    concurrencies = sorted({int(k.split("@")[1]) for a in base.values() for k in a if k.startswith("tok_per_s@")})
    candidates = []
    for number, (spec, picks) in meta.items():
        rounds = {r: a for r, a in by_trial.get(number, {}).items() if r in base}
        per_round: dict[str, dict[int, float]] = {}
        for name in objectives:
            vals = {}
            for r, a in rounds.items():
                v = _figure_value(a, name)
                if v is None:
                    continue
                if _is_ratio(name):
                    b = _figure_value(base[r], name)
                    if not b:
                        continue
                    v = v / b
                vals[r] = v
            per_round[name] = vals
        values = {n: iv for n, vals in per_round.items() if (iv := Interval.of(list(vals.values()))) is not None}
        speedups = {}
        for c in concurrencies:
            ratios = [a[f"tok_per_s@{c}"] / base[r][f"tok_per_s@{c}"] for r, a in rounds.items()
                      if a.get(f"tok_per_s@{c}") and base[r].get(f"tok_per_s@{c}")]
            if (iv := Interval.of(ratios)) is not None:
                speedups[c] = iv
        single = Interval.of([a["single_tok_per_s"] / base[r]["single_tok_per_s"] for r, a in rounds.items()
                              if a.get("single_tok_per_s") and base[r].get("single_tok_per_s")])
        candidates.append(ConfirmedCandidate(number, spec, picks, len(rounds), values, speedups, single, per_round))
    baseline_values = {}
    for key in ["single_tok_per_s"] + [f"tok_per_s@{c}" for c in concurrencies]:
        if (iv := Interval.of([a[key] for a in base.values() if a.get(key) is not None])) is not None:
            baseline_values[key] = iv
    # Optuna hands a start back as the reader's local time without a zone: in UTC with its offset,
    # the same text for every reader (QA, qa95: `confirm --show --json` read 18:40:59 in UTC and
    # 03:40:59 the next day in Tokyo, no zone on either, for one run); from the run id's UTC stamp
    # first, as the local time loses which of a DST change's repeated hours it was (QA, qa168: in
    # Europe/Berlin a run at 01:40 UTC on 2026-10-25 read started_at 00:40 UTC)
    started = min((s.astimezone(timezone.utc) for s in map(measured_from, mine) if s is not None), default=None)
    # no interval without two rounds: such a confirmation is shown, and decides no pick
    picks, why = decide_picks(candidates, objectives, min_speedup_c32) if len(base) >= 2 else ({}, {})
    # A confirmation decides only the picks it was asked about (its candidates' labels): one of
    # trial numbers alone (`--picks 1`) never measured the study's best single setting, so it cannot
    # say which that is; export then picks those by the study's own measurements.
    asked = {label.removeprefix("near ") for c in candidates for label in c.picks}
    picks = {k: v for k, v in picks.items() if k in asked}
    why = {k: v for k, v in why.items() if k in picks}
    return Confirmation(run, started.isoformat(timespec="seconds") if started else None, len(base), objectives,
                        candidates, baseline_values, sum(1 for t in mine if t not in done and t.state.name != "RUNNING"),
                        picks, why, concurrencies)


def _deciding_run(trials) -> str:
    """The latest run (by its last repeat) in which a setting and the baseline were both measured in two
    rounds, else the latest: a run killed in its round 1 hides no earlier one (QA, qa192: it hid 11 rounds)."""
    last, seen = {}, {}
    for t in sorted(trials, key=lambda t: t.number):
        last[(a := t.user_attrs)["run"]] = t.number
        if t.state.name == "COMPLETE" and a.get("status") == MEASURED:
            seen.setdefault((a["run"], a["round"]), set()).add(_who(a))
    pairs = [(k[0], w) for k, v in seen.items() if BASELINE in v for w in v - {BASELINE}]
    return max({r for r, w in pairs if pairs.count((r, w)) >= 2} or last, key=last.__getitem__)


def _picks_readable(attrs: dict) -> bool:
    """Whether a measurement's ``picks`` (the pick names its candidate stood for, as
    tuner.engine.confirm writes them) is absent or a list of text: every reader matches its names
    (QA, qa177: ``picks: [1, 2]`` ended status, export, report and ``confirm --show`` in
    AttributeError's traceback, ``picks: 5`` in TypeError's, and ``picks: "single"`` read as the
    picks s, i, n, g, l, e)."""
    picks = attrs.get("picks")
    return picks is None or (isinstance(picks, list) and all(isinstance(p, str) for p in picks))


def _who(attrs: dict) -> int | str | None:
    """The trial number a confirmation measurement repeats, ``baseline``, or None (unreadable)."""
    who = attrs.get("candidate")
    if who == BASELINE:
        return BASELINE
    try:
        return int(who)
    except (TypeError, ValueError):
        return None


#: The most a setting may trail by and still count as equal to the best (relative): a wide interval
#: (two rounds: Student t's 12.7) says "not told apart", not "as good", and must not hand a pick to a
#: setting that measured half as fast. 3%: the closeness the search is judged by.
EQUAL_MARGIN = 0.03


def equal_within_noise(a: ConfirmedCandidate, b: ConfirmedCandidate, objective: str) -> bool:
    """Whether ``a`` and ``b`` are equal on ``objective``: the paired per-round difference has a
    95% interval that includes 0 (a single common round has none: the margin alone decides), and
    its mean is within :data:`EQUAL_MARGIN` of ``a``'s; with no common round, not equal."""
    ra, rb = a.per_round.get(objective, {}), b.per_round.get(objective, {})
    common = [r for r in ra if r in rb]
    iv = Interval.of([ra[r] - rb[r] for r in common])
    if iv is None:
        return False
    scale = abs(sum(ra[r] for r in common) / len(common))
    return iv.includes(0.0) and abs(iv.mean) <= EQUAL_MARGIN * scale


def _cheapest_tied(best: ConfirmedCandidate, pool: Sequence[ConfirmedCandidate], objectives: Sequence[str]):
    tied = [c for c in pool if c is best or all(equal_within_noise(best, c, o) for o in objectives)]
    return min(tied, key=lambda c: (c.cost, c.trial))


def decide_picks(candidates: Sequence[ConfirmedCandidate], objectives: Sequence[str],
                 min_speedup_c32: float | None = None) -> tuple[dict[str, ConfirmedCandidate], dict[str, str]]:
    """The confirmed picks (module docstring) among candidates with two rounds (QA, qa192: a hung round
    left one reading to decide them). :class:`PickError` ("no safe improvement"): ``min_speedup_c32``."""
    pool = [c for c in candidates if c.rounds >= 2 and all(o in c.values for o in objectives)]
    if not pool or not objectives:
        return {}, {}
    if min_speedup_c32 is not None:
        safe = [c for c in pool if (iv := c.speedups.get(C32)) is not None and (iv.hi is None or iv.hi >= min_speedup_c32)]
        if not safe:
            best = max(pool, key=lambda c: c.speedups[C32].mean if C32 in c.speedups else 0.0)
            iv = best.speedups.get(C32)
            seen = f"best: trial {best.trial} {iv.text(2, 'x')}" if iv else "none measured C=32"
            raise PickError(f"no safe improvement: every confirmed candidate's speedup@{C32} lies below "
                            f"{min_speedup_c32:g} beyond noise ({seen}); keep the baseline, or lower "
                            f"--min-speedup-c32")
        pool = safe
    picks: dict[str, ConfirmedCandidate] = {}
    why: dict[str, str] = {}
    for name, objective in (("single", single_objective(objectives)), ("throughput", throughput_objective(objectives))):
        best = max(pool, key=lambda c: (c.values[objective].mean, -c.trial))
        chosen = _cheapest_tied(best, pool, [objective])
        picks[name] = chosen
        why[name] = (f"best confirmed {objective}" if chosen is best else
                     f"equal within noise to trial {best.trial} on {objective}, and cheaper")
    front = [c for c in pool if not any(_dominates(o, c, objectives) for o in pool)]
    values = [tuple(c.values[o].mean for o in objectives) for c in front]
    knee = front[knee_index(values, [c.trial for c in front])]
    chosen = _cheapest_tied(knee, pool, objectives)
    picks["knee"] = chosen
    why["knee"] = ("knee of the confirmed means" if chosen is knee else
                   f"equal within noise to the knee (trial {knee.trial}) on every objective, and cheaper")
    return picks, why


def _dominates(a: ConfirmedCandidate, b: ConfirmedCandidate, objectives: Sequence[str]) -> bool:
    va = [a.values[o].mean for o in objectives]
    vb = [b.values[o].mean for o in objectives]
    return all(x >= y for x, y in zip(va, vb)) and any(x > y for x, y in zip(va, vb))


def confirmation_lines(conf: Confirmation, cand: ConfirmedCandidate) -> list[str]:
    """Provenance lines for an exported (or shown) candidate."""
    rounds = counted(cand.rounds, 'round')
    lines = [f"confirmed: run {conf.run}, {rounds} interleaved with the baseline "
             f"(paired speedups, mean [95% interval]):"]
    if cand.single_speedup is not None:
        lines.append(f"  single request: {cand.single_speedup.text(2, 'x')}")
    for c in conf.concurrencies:
        iv = cand.speedups.get(c)
        if iv is None:
            continue
        verdict = cand.versus_baseline(c)
        note = {"within noise": "not distinguishable from the baseline",
                "loss": "LOSES to the baseline beyond noise", "gain": "gains beyond noise"}.get(verdict, "")
        lines.append(f"  concurrency {c}: {iv.text(2, 'x')}: {note}")
    return lines


def confirmation_data(conf: Confirmation) -> dict[str, Any]:
    """Plain data (``--json``)."""
    return {
        "run": conf.run, "started_at": conf.started_at, "rounds": conf.rounds, "failed": conf.failed,
        "objectives": conf.objectives,
        "baseline": {k: v.to_dict() for k, v in conf.baseline_values.items()},
        "candidates": [{
            "trial": c.trial, "effective": c.spec.as_dict() if c.spec else None, "picks": c.picks,
            "rounds": c.rounds, "values": {k: v.to_dict() for k, v in c.values.items()},
            "single_speedup": c.single_speedup.to_dict() if c.single_speedup else None,
            "speedup": {str(k): v.to_dict() for k, v in c.speedups.items()},
            "versus_baseline": {str(k): c.versus_baseline(k) for k in c.speedups},
        } for c in conf.candidates],
        "picks": {name: c.trial for name, c in conf.picks.items()},
        "why": conf.why,
    }


def confirmation_summary(study) -> dict[str, Any] | None:
    """The last confirmation as plain data (``status``), or None."""
    conf = load_confirmation(study)
    return None if conf is None else confirmation_data(conf)


def confirmed_pick(conf: Confirmation | None, pick: str) -> ConfirmedCandidate | None:
    """The confirmed candidate ``--pick NAME`` stands for (None: not confirmed, or a trial number)."""
    if conf is None or pick not in PICKS:
        return None
    return conf.picks.get(pick)


def confirm_candidates(study, picks: Sequence[str], near: float = 0.03, max_candidates: int = 6):
    """The settings ``tuner study confirm`` re-measures: the front's named picks (or trial numbers),
    and for ``single`` and ``throughput`` every feasible measured setting -- on the front or not: a
    lucky reading of the pick may dominate it -- within ``near`` (relative) of the pick's objective
    value: a setting that measured the same within noise may be the real best, or as good and cheaper. At most ``max_candidates``, the named picks first. Returns
    :class:`tuner.engine.confirm.Candidate` objects."""
    from ..engine.confirm import Candidate
    from ..engine.records import load_records
    from .pareto import eligible, pick_record, study_front

    front = study_front(study)
    records = load_records(study)
    pool, seen = [], set()
    for r in eligible(records, None):
        if r.attrs.get("effective_key") not in seen:
            seen.add(r.attrs.get("effective_key"))
            pool.append(r)
    chosen: dict[int, list[str]] = {}
    specs: dict[int, SpecConfig] = {}

    def add(record, label: str) -> None:
        if record.number not in chosen and len(chosen) >= max_candidates:
            return
        labels = chosen.setdefault(record.number, [])
        if label not in labels and label.removeprefix("near ") not in labels:
            chosen[record.number].append(label)
        specs[record.number] = record.effective

    for name in picks:
        add(pick_record(front, records, name, flag="--picks"), name)
    for name in picks:
        if name not in ("single", "throughput"):
            continue
        objective = single_objective(front.objectives) if name == "single" else throughput_objective(front.objectives)
        k = front.objectives.index(objective)
        top = (front.single if name == "single" else front.throughput).values[k]
        close = sorted((r for r in pool if r.values[k] >= top * (1 - near)), key=lambda r: -r.values[k])
        for r in close:
            add(r, f"near {name}")
    return [Candidate(n, specs[n], tuple(labels)) for n, labels in chosen.items()]
