"""The suite as the model backend measures it: request by request, in the study's staged order,
with the modelled GPU time of every stage.

:class:`tuner.engine.backends.ModelBackend` draws a measurement's whole-suite figures first (its
noise, as before stages existed); :func:`staged_figures` then spreads them over the requests of
:func:`tuner.bench.plan.stage_plan`, so the figures after every stage are what a server measuring
those requests would show, and the figures after the last stage are exactly the whole-suite ones:

* a single request of row (prompt, length) runs at the row's expected rate (the performance model's
  for that prompt and length; a landscape table has one rate for all rows), times the measurement's
  own noise draw (shared by every request of one launch, as a server's run-to-run spread is), times
  its own deviation: relative standard deviation ``noise``, centred over the measurement so the
  partial figures converge on the whole-suite figure (a sweep batch likewise);
* a partial figure is what :class:`tuner.bench.SuiteResult` computes from the requests so far: the
  mean over the rows measured of their repeats' mean, and each sweep level measured so far.

Modelled time (:data:`FLUSH_S` per flush, the warm-up at the shortest row's rate, each single
request as its tokens over its rate, each batch as its tokens over the level's aggregate rate; a
level a table lacks is interpolated log-log, :func:`sweep_rate`).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Sequence

from ..bench.plan import Stage, stage_plan

#: Modelled seconds of one ``/flush_cache`` between phases: an HTTP round trip and SGLang's cache
#: reset on an idle server (an estimate; it is small against any request of the suite).
FLUSH_S = 1.0


@dataclass
class ModelFigures:
    """Figures from the performance model or a landscape table, shaped like a SuiteResult for the
    objectives (``single_tok_per_s``, ``tok_per_s_at(c)``, ``accept_length``); ``stages``: the
    partial figures after each stage of the study's order (:meth:`stage_results`)."""

    single_tok_per_s: float | None
    tok_per_s: dict[int, float]
    accept_length: float | None = None
    stages: list[tuple[str, "ModelFigures"]] = field(default_factory=list, repr=False, compare=False)
    request_cv: float | None = field(default=None, repr=False, compare=False)  #: the requests' own spread

    def tok_per_s_at(self, concurrency: int) -> float | None:
        return self.tok_per_s.get(concurrency)

    def stage_results(self) -> list[tuple[str, "ModelFigures"]]:
        """As :meth:`tuner.bench.SuiteResult.stage_results`."""
        return list(self.stages)


@dataclass
class ModelledStage:
    name: str
    figures: ModelFigures  #: the partial figures at the end of the stage
    seconds: float  #: modelled seconds the stage took


def sweep_rate(c: int, figures: ModelFigures) -> float:
    """Aggregate tok/s at concurrency ``c``: the figure, or (a level the figures lack) interpolated
    log-log between the single-request rate (C=1) and the nearest levels, growing with C beyond."""
    known = {1: figures.single_tok_per_s, **{k: v for k, v in figures.tok_per_s.items() if v}}
    if known.get(c):
        return known[c]
    points = sorted((k, v) for k, v in known.items() if v)
    lo = max((p for p in points if p[0] < c), default=points[0])
    hi = min((p for p in points if p[0] > c), default=points[-1])
    if hi[0] == lo[0]:
        return lo[1] * c / lo[0]  # beyond the last level: throughput grows with C
    w = (math.log(c) - math.log(lo[0])) / (math.log(hi[0]) - math.log(lo[0]))
    return math.exp(math.log(lo[1]) * (1 - w) + math.log(hi[1]) * w)


def batch_tokens(suite, c: int) -> int:
    prompts = suite.prompts or []
    return sum(suite.sweep_tokens(prompts[i % len(prompts)]) for i in range(c)) if prompts else 0


def warmup_seconds(suite, rate: float) -> float:
    return suite.warmup.requests * suite.warmup.max_tokens / rate


def _flushes(suite, stage: Stage) -> int:
    return (bool(stage.single) + len(stage.sweep)) if suite.flush_cache else 0


def suite_model_seconds(figures: ModelFigures, suite, plan: Sequence[Stage] | None = None) -> float:
    """Modelled seconds ``suite`` takes on a server measuring ``figures`` (every single request at
    the mean single-request rate): warm-up, flushes, single requests, batches (every repeat)."""
    plan = stage_plan(suite) if plan is None else plan
    single = figures.single_tok_per_s
    seconds = warmup_seconds(suite, single)
    for stage in plan:
        seconds += _flushes(suite, stage) * FLUSH_S + sum(s.max_tokens for s in stage.single) / single
        seconds += sum(batch_tokens(suite, b.concurrency) / sweep_rate(b.concurrency, figures) for b in stage.sweep)
    return seconds


def _centred(rng: random.Random, n: int, noise: float) -> list[float]:
    """``n`` relative deviations of standard deviation ``noise`` whose mean is zero."""
    e = [rng.gauss(0.0, 1.0) for _ in range(n)]
    mean = sum(e) / n if n else 0.0
    return [max(-0.9, noise * (x - mean)) for x in e]


def staged_figures(plan: Sequence[Stage], suite, rows: dict[tuple[str, int], float], final: ModelFigures,
                   noise: float, rng: random.Random) -> tuple[float, list[ModelledStage]]:
    """Warm-up seconds and every stage's partial figures and seconds (see the module docstring).

    ``rows``: each single row's rate before the measurement's own noise (``final`` has it: its
    single figure over the rows' mean is that draw); ``final``: the whole-suite figures drawn."""
    units = [(i, s) for i, st in enumerate(plan) for s in st.single]
    expected = sum(rows.values()) / len(rows) if rows else 0.0
    launch = final.single_tok_per_s / expected if expected else 1.0
    dev = _centred(rng, len(units), noise)
    rate = [rows[(s.prompt, s.max_tokens)] * launch * (1 + d) for (_, s), d in zip(units, dev)]
    full = _row_mean(units, rate, len(plan))
    scale = final.single_tok_per_s / full if full else 1.0
    rate = [r * scale for r in rate]
    batches = {c: [b for st in plan for b in st.sweep if b.concurrency == c] for c in final.tok_per_s}
    level = {c: dict(zip(bs, (v * (1 + d) for d in _centred(rng, len(bs), noise)))) if len(bs) > 1
             else {b: v for b in bs} for c, v in final.tok_per_s.items() for bs in [batches[c]]}
    first_rate = min(rate, default=final.single_tok_per_s or 1.0)
    out = []
    for k, stage in enumerate(plan):
        seconds = _flushes(suite, stage) * FLUSH_S
        seconds += sum(s.max_tokens / r for (i, s), r in zip(units, rate) if i == k)
        for b in stage.sweep:
            got = level.get(b.concurrency, {}).get(b)
            seconds += batch_tokens(suite, b.concurrency) / (got or sweep_rate(b.concurrency, final))
        tps = {}
        for c, by_batch in level.items():
            seen = [v for b, v in by_batch.items() if any(b in st.sweep for st in plan[:k + 1])]
            if seen:
                tps[c] = sum(seen) / len(seen)
        single = _row_mean(units, rate, k + 1) if any(i <= k for i, _ in units) else None
        out.append(ModelledStage(stage.name, ModelFigures(single, tps, final.accept_length), seconds))
    if out:
        out[-1].figures = ModelFigures(final.single_tok_per_s, dict(final.tok_per_s), final.accept_length)
    return warmup_seconds(suite, first_rate), out


def _row_mean(units, rate, stages: int) -> float:
    """Mean over rows of the mean of their requests in the first ``stages`` stages."""
    per_row: dict[tuple[str, int], list[float]] = {}
    for (i, s), r in zip(units, rate):
        if i < stages:
            per_row.setdefault((s.prompt, s.max_tokens), []).append(r)
    return sum(sum(v) / len(v) for v in per_row.values()) / len(per_row) if per_row else 0.0


def request_token_needs(suite, count_tokens, chat: bool = False) -> list[tuple[int, object, int, int]]:
    """Every request ``suite`` sends, as the simulated server counts it: ``(index, prompt, input
    tokens, the largest max_tokens a phase sends it with)``. Input tokens by ``count_tokens``
    (:meth:`tuner.sim.model.PerfModel.prompt_tokens`) of the prompt's text, or through ``chat`` of its
    chat template's stand-in (:func:`tuner.sim.requests.chat_prompt`). What each phase sends
    (:mod:`tuner.bench.runner`): warm-up calls and the largest sweep batch take the prompts in turn
    (``Suite.cycled``); the single phase its first ones, at their lengths."""
    from ..sim.requests import chat_prompt

    prompts = suite.prompts or []
    lengths: dict[int, list[int]] = {id(p): [] for p in prompts}
    for p in suite.cycled(suite.warmup.requests):
        lengths[id(p)].append(suite.warmup.max_tokens)
    for p in suite.single_prompts():
        lengths[id(p)] += suite.single_lengths(p)
    for p in suite.cycled(max(suite.sweep.concurrencies, default=0)):
        lengths[id(p)].append(suite.sweep_tokens(p))
    return [(i, p, count_tokens(chat_prompt(p.chat_messages()) if chat else (p.text or "")),
             max(lengths[id(p)], default=0)) for i, p in enumerate(prompts)]
