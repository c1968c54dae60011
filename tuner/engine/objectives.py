"""Objectives: what a trial's figures are worth against the autoregressive baseline.

Names (the study file's ``objectives``), all maximized:

* ``single_speedup``: mean single-request tok/s over prompts x lengths, over the baseline's (the
  article's 1.65x);
* ``speedup@C``: aggregate tok/s of the concurrency sweep at C, over the baseline's (1.05x at C=32);
* ``single_tok_per_s`` and ``tok_per_s@C``: the same figures, absolute (model time on the simulator);
* ``goodput@C`` and ``goodput_tok_per_s@C``: the requests (per second) and their tokens (per second)
  at concurrency C that meet every latency limit of the study's ``slo`` entry at C, absolute
  (:mod:`tuner.engine.limits`).

Figures come from anything with ``single_tok_per_s`` and ``tok_per_s_at(c)``: a measured
:class:`tuner.bench.SuiteResult` or the performance model's expectation.
"""

from __future__ import annotations

from typing import Protocol, Sequence

from ..config.study import objective_concurrency

#: The value a trial that measured nothing (invalid, failed launch, crash) reports for every
#: objective. All objectives are maximized and positive, so 0 is the worst; the trial also carries a
#: violated constraint, so constrained samplers rank it below every feasible trial.
WORST_VALUE = 0.0


class Figures(Protocol):
    single_tok_per_s: float | None

    def tok_per_s_at(self, concurrency: int) -> float | None: ...


def figure(name: str, figures: Figures, extra: dict | None = None) -> float | None:
    """The absolute figure behind an objective (tok/s; goodput from ``extra``, the limit attributes)."""
    if name.startswith("goodput"):
        return (extra or {}).get(name)
    c = objective_concurrency(name)
    return figures.single_tok_per_s if c is None else figures.tok_per_s_at(c)


def objective_values(names: Sequence[str], figures: Figures, baseline: Figures,
                     extra: dict | None = None) -> list[float]:
    """Objective values of ``figures`` against ``baseline`` (``extra``: goodput figures).

    Raises ``ValueError`` naming the objective when a figure is missing (the suite does not measure
    that concurrency, or every request of that phase failed).
    """
    values = []
    for name in names:
        got = figure(name, figures, extra)
        if got is None:
            raise ValueError(f"objective {name}: the suite result has no such figure")
        if "speedup" in name:
            base = figure(name, baseline)
            if not base:
                raise ValueError(f"objective {name}: the baseline has no such figure")
            got = got / base
        values.append(float(got))
    return values


def figure_names(objectives: Sequence[str]) -> list[str]:
    """The absolute figures behind ``objectives`` (``speedup@32`` -> ``tok_per_s@32``), without
    repeats: the baseline study's metrics, which it records as measured (not as speedups of 1)."""
    out: list[str] = []
    for name in objectives:
        c = objective_concurrency(name)
        fig = "single_tok_per_s" if c is None else f"tok_per_s@{c}"
        if fig not in out:
            out.append(fig)
    return out


def worst_values(names: Sequence[str]) -> list[float]:
    return [WORST_VALUE] * len(names)


def dominates(a: Sequence[float], b: Sequence[float]) -> bool:
    """``a`` is at least as good as ``b`` everywhere and better somewhere (maximization)."""
    return all(x >= y for x, y in zip(a, b)) and any(x > y for x, y in zip(a, b))


def pareto_front(points: Sequence[Sequence[float]]) -> list[int]:
    """Indices of the non-dominated points (maximization), in input order."""
    return [i for i, p in enumerate(points) if not any(dominates(q, p) for q in points)]


def hypervolume(points: Sequence[Sequence[float]], reference: Sequence[float]) -> float:
    """Hypervolume of maximized points above ``reference`` (Optuna's implementation)."""
    import numpy as np
    from optuna._hypervolume import compute_hypervolume

    pts = [p for p in points if all(x > r for x, r in zip(p, reference))]
    if not pts:
        return 0.0
    # Optuna computes for minimization: negate.
    return float(compute_hypervolume(-np.asarray(pts, dtype=float), -np.asarray(reference, dtype=float)))
