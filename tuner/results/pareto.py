"""The Pareto front of a study, its two extremes and its knee, and the picks ``export`` offers.

Reads storage only (never writes a trial). The front comes from :func:`tuner.results.status.front_records`
(feasible measured trials, one per effective config, non-dominated on the study's objectives), so
``status``, ``pareto`` and ``export`` always agree on what the front is.

Definitions (all objectives are maximized):

* **extremes**: for each objective, the front point with the best value of it (ties: the better
  sum of the other objectives, then the lower trial number). ``single`` is the extreme of the
  single-request objective (``single_speedup`` / ``single_tok_per_s``); ``throughput`` the extreme
  of the objective at the highest concurrency (``speedup@C`` / ``tok_per_s@C``). A study without
  such an objective has no such pick: ``export --pick`` and ``confirm --picks`` refuse the name
  (:func:`absent_pick`), and the report marks none; :func:`picks` falls back to the first
  (``single``) or the last (``throughput``) objective, for callers that filter by :func:`absent_pick`.
* **knee**: each objective is normalized over the front to [0, 1] (min -> 0, max -> 1; an objective
  with one value on the whole front counts 1 for every point). The knee is the front point with the
  largest sum of normalized objectives. With two objectives the extremes sit at (1, 0) and (0, 1),
  so this is exactly the point farthest from the line joining the two extremes, on the side of the
  ideal point: the setting that gives up the least of either objective. Ties (a front of two points
  always ties) go to the larger product of the raw objective values (the larger geometric-mean
  speedup), then the lower trial number. A front of one point is its own knee and both extremes.

Only feasible trials are picked: a trial that breaks one of the study's latency SLOs (or an
enforced lossless check) is measured but infeasible, shown with the limit it breaks and by how much
(:func:`limits_note`), and never on the front.

Bad state (no completed trial, no feasible trial for a pick) raises :class:`PickError` (the CLI
exits 1); a bad request (a trial number that does not exist) raises
:class:`tuner.config.yamlfile.ConfigError` (exit 2).

Why one module: the definitions above (front, extremes, knee, what a pick may name) and the code
that applies them are read together by pareto, export, confirm and the report; split, a pick's
rule would sit apart from the front it is taken on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..config.study import objective_concurrency
from ..config.yamlfile import ConfigError
from ..engine.limits import SLO_ATTR
from ..engine.records import (FAILED, INVALID, MEASURED, PRUNED, REUSED, TrialRecord, counts_text, load_records,
                              merge_repeats, whole_number)
from .status import front_records
from .traffic import limits_note

#: ``--pick`` names besides a trial number.
PICKS = ("single", "throughput", "knee")


def trial_number(text: str) -> int | None:
    """``text`` as a trial number: ASCII digits 0-9 and nothing else, or None. Python's ``int``
    also takes other scripts' digits ('３', '٣'), spaces around, a sign and underscores ('+1',
    '0_1'): each would name a trial its writer did not see (QA: '３' exported trial 3)."""
    return int(text) if text.isascii() and text.isdigit() else None


#: The concurrency ``--min-speedup-c32`` reads.
C32 = 32


class PickError(RuntimeError):
    """The study holds nothing the request can use (no completed trial, no feasible pick)."""


@dataclass
class FrontPoint:
    """One effective config on the front: its first measurement, and what marks it."""

    record: TrialRecord
    values: tuple[float, ...]
    normalized: tuple[float, ...] = ()
    roles: list[str] = field(default_factory=list)  #: "knee", "max single_speedup", ...
    same_as: list[int] = field(default_factory=list)  #: later trials that reused this measurement

    @property
    def number(self) -> int:
        return self.record.number


@dataclass
class Front:
    study: str
    objectives: list[str]
    points: list[FrontPoint]  #: sorted by the first objective, best first
    knee: FrontPoint
    extremes: dict[str, FrontPoint]  #: objective name -> front point best at it
    baseline: dict[str, Any] | None  #: the baseline's figures (single_tok_per_s, tok_per_s@C, ...)
    concurrencies: list[int]  #: every concurrency measured (baseline or trials)
    eligible: int  #: feasible measured effective configs considered
    min_speedup_c32: float | None = None
    #: measured settings kept off the front because they break the study's limits (SLOs, lossless)
    limited: list[TrialRecord] = field(default_factory=list)

    def point(self, number: int) -> FrontPoint | None:
        return next((p for p in self.points if p.number == number), None)

    @property
    def single(self) -> FrontPoint:
        return self.extremes[single_objective(self.objectives)]

    @property
    def throughput(self) -> FrontPoint:
        return self.extremes[throughput_objective(self.objectives)]


def single_objective(objectives: Sequence[str]) -> str:
    """The objective ``--pick single`` maximizes."""
    for name in objectives:
        if objective_concurrency(name) is None:
            return name
    return objectives[0]


def throughput_objective(objectives: Sequence[str]) -> str:
    """The objective ``--pick throughput`` maximizes: the one at the highest concurrency."""
    best = [(objective_concurrency(n), i) for i, n in enumerate(objectives) if objective_concurrency(n)]
    return objectives[max(best)[1]] if best else objectives[-1]


def absent_pick(objectives: Sequence[str], pick: str) -> str | None:
    """Why ``--pick single``/``throughput`` cannot mean anything for a study with ``objectives``
    (it has no single-request objective, or none at a concurrency), else None. Picking another
    objective's best under that name would hand over, say, the slowest setting at C=32 as
    ``throughput``."""
    if pick == "single" and all(objective_concurrency(n) is not None for n in objectives):
        what = "single-request objective (single_speedup, single_tok_per_s)"
    elif pick == "throughput" and all(objective_concurrency(n) is None for n in objectives):
        what = "objective at a concurrency (speedup@C, tok_per_s@C, goodput@C, ...)"
    else:
        return None
    others = [p for p in PICKS if p != pick and absent_pick(objectives, p) is None]
    return (f"{pick}: the study has no {what}, only {', '.join(objectives)}; give "
            f"{' or '.join(others)} or a trial number")


def check_pick(objectives: Sequence[str], pick: str, flag: str = "--pick") -> None:
    """:class:`ConfigError` naming ``flag`` when ``pick`` cannot mean anything (:func:`absent_pick`)."""
    why = absent_pick(objectives, pick)
    if why is not None:
        raise ConfigError(flag, "", why)


def normalize(values: Sequence[Sequence[float]]) -> list[tuple[float, ...]]:
    """Each column scaled to [0, 1] over the given points (a constant column is all 1)."""
    if not values:
        return []
    cols = list(zip(*values))
    lows, highs = [min(c) for c in cols], [max(c) for c in cols]
    return [tuple(1.0 if hi == lo else (v - lo) / (hi - lo) for v, lo, hi in zip(row, lows, highs))
            for row in values]


def knee_index(values: Sequence[Sequence[float]], numbers: Sequence[int] | None = None) -> int:
    """Index of the knee among front points (see the module docstring for the definition)."""
    if not values:
        raise ValueError("an empty front has no knee")
    numbers = list(numbers) if numbers is not None else list(range(len(values)))
    norm = normalize(values)

    def rank(i: int):
        product = math.prod(max(v, 0.0) for v in values[i])
        return (round(sum(norm[i]), 12), product, -numbers[i])

    return max(range(len(values)), key=rank)


def extreme_index(values: Sequence[Sequence[float]], k: int, numbers: Sequence[int] | None = None) -> int:
    """Index of the point best at objective ``k`` (ties: better sum of the others, lower number)."""
    numbers = list(numbers) if numbers is not None else list(range(len(values)))
    return max(range(len(values)),
               key=lambda i: (values[i][k], sum(values[i]) - values[i][k], -numbers[i]))


def picks(front: Sequence[TrialRecord], objectives: Sequence[str]) -> dict[str, TrialRecord]:
    """``{"single": .., "throughput": .., "knee": ..}`` among front records (as
    :func:`tuner.results.status.front_records` returns them): the same choices ``export --pick`` makes."""
    if not front:
        return {}
    values = [tuple(float(v) for v in r.values) for r in front]
    numbers = [r.number for r in front]
    objectives = list(objectives)
    return {
        "single": front[extreme_index(values, objectives.index(single_objective(objectives)), numbers)],
        "throughput": front[extreme_index(values, objectives.index(throughput_objective(objectives)), numbers)],
        "knee": front[knee_index(values, numbers)],
    }


def refused_now(space, spec) -> str | None:
    """Why this tuner's rules refuse ``spec`` on the study's servers (``space``: the study's, as
    :func:`tuner.engine.study.config_from_study` gives it), or None: a setting an older tuner
    measured, under a rule added since, which SGLang may not start (export warns, confirm skips it)."""
    v = space.resolve(spec).violation
    if v is None:
        return None
    return f"this tuner's rules refuse it on the study's servers ({v.rule}: {v.message})"


def reused_from(record: TrialRecord) -> int | None:
    """The trial a reused trial stands for: its ``reused_from`` attribute when that is a trial number
    (a whole number of at least 0), else None. The tuner writes a number; a value edited by hand or
    written by another tool (``"abc"``, ``2.5``, ``NaN``, a list) names no trial, and the reused
    trial then stands for itself: it carries the figures it reused (QA: ``int()`` of ``"abc"`` ended
    ``pareto`` and every ``export --pick`` in a traceback)."""
    source = record.attrs.get("reused_from")
    return source if whole_number(source) else None


def repeats_mean(records: Sequence[TrialRecord], record: TrialRecord) -> TrialRecord:
    """The record that stands for ``record``'s setting: the mean of its readings when the study
    measured it more than once (:func:`merge_repeats`), else ``record`` itself. Only the records
    merge_repeats builds are read for ``measured_in``: a stored attribute of that name (edited by
    hand, or written by another tool) is no list of readings (QA: ``measured_in: 5`` ended
    ``export --pick 5`` in ``TypeError: argument of type 'int' is not iterable``)."""
    given = {id(r) for r in records}
    return next((m for m in merge_repeats(list(records))
                 if id(m) not in given and record.number in m.attrs["measured_in"]), record)


def speedup_c32(record: TrialRecord) -> float | None:
    return record.attrs.get(f"speedup@{C32}")


def completed(records: Sequence[TrialRecord]) -> list[TrialRecord]:
    """Trials the engine finished (measured, reused, invalid or failed)."""
    return [r for r in records if r.state == "COMPLETE"]


def check_c32_swept(study_name: str, swept, min_speedup_c32: float | None) -> None:
    """:class:`ConfigError` for ``--min-speedup-c32`` on a study whose suite never sweeps C=32
    (``swept``: the concurrencies it measures): no trial could meet it, and "the best measured is
    0.000" would blame the settings."""
    if min_speedup_c32 is not None and C32 not in swept:
        raise ConfigError("--min-speedup-c32", "", f"study {study_name} never measured concurrency {C32} "
                          f"(its suite sweeps {', '.join(map(str, sorted(swept))) or 'no concurrency'}); "
                          f"leave --min-speedup-c32 out")


def eligible(records: Sequence[TrialRecord], min_speedup_c32: float | None) -> list[TrialRecord]:
    """Feasible measured trials meeting ``--min-speedup-c32`` (its figure missing fails it)."""
    out = [r for r in records if r.status == MEASURED and r.feasible and r.values is not None]
    if min_speedup_c32 is not None:
        out = [r for r in out if (speedup_c32(r) or 0.0) >= min_speedup_c32]
    return out


def build_front(study_name: str, objectives: list[str], records: list[TrialRecord],
                baseline: dict | None, min_speedup_c32: float | None = None) -> Front:
    """The front of ``records`` (see the module docstring). Raises :class:`PickError` when no trial
    is eligible, :class:`ConfigError` for ``min_speedup_c32`` on a study that never measured C=32."""
    if not completed(records):
        counts = counts_text(records) or "no trials"
        raise PickError(f"study {study_name} has no completed trial yet ({counts}); run "
                        f"`tuner study run` first")
    measured = eligible(records, None)
    if measured:
        # the sweep's figures a trial holds (speedup@C); a key that names no concurrency is not one
        check_c32_swept(study_name, {c for r in measured for k in r.attrs if k.startswith("speedup@")
                                     and (c := objective_concurrency(k)) is not None}, min_speedup_c32)
    pool = eligible(records, min_speedup_c32)
    if not pool:
        feasible = eligible(records, None) if min_speedup_c32 is not None else []
        if feasible:  # else no feasible trial at all: said below with why (limits, failures)
            readings = [v for v in map(speedup_c32, feasible) if v is not None]
            seen = f"the best measured is {max(readings):.3f}" if readings else f"none measured speedup@{C32}"
            raise PickError(f"no feasible trial of study {study_name} reaches speedup@{C32} >= "
                            f"{min_speedup_c32:g} ({seen}); lower --min-speedup-c32")
        limited = [r for r in records if r.status == MEASURED and not r.feasible and limits_note(r.attrs)]
        if limited:
            closest = min(limited, key=lambda r: sum(max(0.0, c["excess"]) for c in r.attrs.get(SLO_ATTR) or []))
            raise PickError(f"no measured trial of study {study_name} meets the study's limits ({len(limited)} "
                            f"break them; closest: trial {closest.number}, {limits_note(closest.attrs)}); "
                            f"relax the slo or measure more settings")
        raise PickError(f"study {study_name} has no feasible measured trial ({counts_text(records) or 'no trials'}); "
                        "`tuner study status` shows the failures")
    front = front_records(pool)
    values = [tuple(float(v) for v in r.values) for r in front]
    numbers = [r.number for r in front]
    norm = normalize(values)
    points = [FrontPoint(r, v, n) for r, v, n in zip(front, values, norm)]
    reusers: dict[int, list[int]] = {}
    for r in records:
        if r.status == REUSED and (source := reused_from(r)) is not None:
            reusers.setdefault(source, []).append(r.number)
    for p in points:
        p.same_as = reusers.get(p.number, [])
    knee = points[knee_index(values, numbers)]
    knee.roles.append("knee")
    extremes = {}
    for k, name in enumerate(objectives):
        p = points[extreme_index(values, k, numbers)]
        extremes[name] = p
        p.roles.append(f"max {name}")
    points.sort(key=lambda p: (-p.values[0], p.number))
    concurrencies = sorted({int(k.split("@")[1]) for r in pool for k in r.attrs if k.startswith("tok_per_s@")}
                           | {int(k.split("@")[1]) for k in (baseline or {}) if k.startswith("tok_per_s@")})
    limited, seen = [], set()
    for r in records:
        key = r.attrs.get("effective_key")
        if r.status == MEASURED and not r.feasible and limits_note(r.attrs) and key not in seen:
            seen.add(key)
            limited.append(r)
    return Front(study_name, list(objectives), points, knee, extremes, baseline, concurrencies,
                 eligible=len({r.attrs.get("effective_key") for r in pool}), min_speedup_c32=min_speedup_c32,
                 limited=limited)


def study_front(study, min_speedup_c32: float | None = None) -> Front:
    """The front of a stored study."""
    from ..engine.baseline import find_baseline

    objectives = study.user_attrs.get("objectives") or [f"objective_{i}" for i in range(len(study.directions))]
    base = find_baseline(study)
    return build_front(study.study_name, list(objectives), load_records(study),
                       None if base is None else base.attrs, min_speedup_c32)


def pick_record(front: Front, records: Sequence[TrialRecord], pick: str, flag: str = "--pick") -> TrialRecord:
    """The trial ``--pick`` names: ``single``, ``throughput``, ``knee`` (on ``front``) or a trial
    number (any measured trial, on the front or not, that meets the front's ``--min-speedup-c32``).

    A reused trial stands for the trial it reused. Raises :class:`ConfigError` naming ``flag`` (the
    command's own flag: ``confirm`` takes ``--picks``) for a name that is none of these, a trial
    number that does not exist or a pick the study's objectives cannot mean (:func:`absent_pick`),
    :class:`PickError` for one that measured nothing or misses the threshold.
    """
    check_pick(front.objectives, pick, flag)
    if pick == "single":
        return front.single.record
    if pick == "throughput":
        return front.throughput.record
    if pick == "knee":
        return front.knee.record
    number = trial_number(pick)
    if number is None:
        raise ConfigError(flag, "", f"{pick!r} is not single, throughput, knee or a trial number "
                          "in digits 0-9")
    by_number = {r.number: r for r in records}
    if number not in by_number:
        last = max(by_number) if by_number else None
        raise ConfigError(flag, "", f"study {front.study} has no trial {number}; give a trial number "
                          f"0..{last} or single, throughput, knee" if last is not None
                          else f"study {front.study} has no trials; run it first (tuner study run)")
    r = by_number[number]
    if r.status == REUSED and (source := reused_from(r)) is not None:
        r = by_number.get(source, r)
    if r.status == PRUNED:
        raise PickError(f"trial {number} of study {front.study} was pruned after stage {r.attrs.get('pruned_at')} "
                        f"(dominated by the front before the suite ended): its partial figures are not a result; "
                        f"pick a measured trial")
    if r.state == "FAIL":  # stopped (Ctrl-C, a dead worker, a budget slot taken): it never finishes
        raise PickError(f"trial {number} of study {front.study} ended without a result "
                        f"({r.status or 'interrupted'}); pick a measured trial")
    if r.state != "COMPLETE":
        raise PickError(f"trial {number} of study {front.study} is {r.state.lower()}, not finished; "
                        f"wait for it or pick a finished trial")
    if r.status == MEASURED and not r.feasible and limits_note(r.attrs):
        raise PickError(f"trial {number} of study {front.study} {limits_note(r.attrs)}; pick a trial that "
                        f"meets the study's limits")
    if r.status in (FAILED, INVALID) or not r.feasible:
        why = r.failure_class or r.status or r.state.lower()
        msg = r.attrs.get("failure_message")
        raise PickError(f"trial {number} of study {front.study} measured nothing ({why}"
                        + (f": {_first_line(msg)}" if msg else "") + "); pick a measured trial")
    # A setting measured more than once stands as the mean of its readings, as on the front and in
    # pareto: the export's header shows the figures the pick was judged by, not one reading.
    r = repeats_mean(records, r)
    if front.min_speedup_c32 is not None and (speedup_c32(r) or 0.0) < front.min_speedup_c32:
        raise PickError(f"trial {number} has speedup@{C32} {speedup_c32(r) or 0.0:.3f}, below "
                        f"--min-speedup-c32 {front.min_speedup_c32:g}")
    return r


def front_data(front: Front) -> dict[str, Any]:
    """The front as plain data (``tuner study pareto --json``)."""
    return {
        "study": front.study,
        "objectives": front.objectives,
        "knee_definition": "max sum of objectives normalized over the front (farthest from the line "
                           "between the extremes); ties: larger product of raw values, lower trial",
        "min_speedup_c32": front.min_speedup_c32,
        "eligible_configs": front.eligible,
        "baseline": None if front.baseline is None else {
            "slo_checks": front.baseline.get(SLO_ATTR),
            "single_tok_per_s": front.baseline.get("single_tok_per_s"),
            "tok_per_s": {str(c): front.baseline.get(f"tok_per_s@{c}") for c in front.concurrencies
                          if front.baseline.get(f"tok_per_s@{c}") is not None},
        },
        "knee": front.knee.number,
        "extremes": {name: p.number for name, p in front.extremes.items()},
        "points": [point_data(p, front.concurrencies) for p in front.points],
        "limited": [{"trial": r.number, "effective": r.effective.as_dict() if r.effective else None,
                     "values": r.values, "breaks": limits_note(r.attrs)} for r in front.limited],
    }


def point_data(p: FrontPoint, concurrencies: Sequence[int]) -> dict[str, Any]:
    a = p.record.attrs
    return {
        "trial": p.number,
        "effective": p.record.effective.as_dict() if p.record.effective else None,
        "requested": p.record.requested.as_dict() if p.record.requested else None,
        "values": list(p.values),
        "roles": list(p.roles),
        "single_tok_per_s": a.get("single_tok_per_s"),
        "single_speedup": a.get("single_speedup"),
        "tok_per_s": {str(c): a[f"tok_per_s@{c}"] for c in concurrencies if a.get(f"tok_per_s@{c}") is not None},
        "speedup": {str(c): a[f"speedup@{c}"] for c in concurrencies if a.get(f"speedup@{c}") is not None},
        "accept_length": a.get("accept_length"),
        "slo_checks": a.get(SLO_ATTR),
        "lossless_share": a.get("lossless_share"),
        "same_as": list(p.same_as),
    }


def _first_line(text: str) -> str:
    return str(text).strip().splitlines()[0][:200] if str(text).strip() else ""
