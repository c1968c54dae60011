"""The order a study measures its suite in: stages that decide early.

A study measures the baseline and every trial with the same suite *in the same order*, so the
figures after any stage are comparable across them: a trial's speedup after stage ``k`` is its
figures over the baseline's figures after stage ``k``, the same requests on both sides.
:func:`stage_plan` gives that order; :func:`tuner.bench.run_suite` runs it over HTTP
(``plan=...``) and the performance-model backend (:class:`tuner.engine.backends.ModelBackend`)
follows it request by request. The plan is a pure function of the suite and of the concurrencies
the study's objectives read, so every worker and every later run computes the same one.

The stages, each left out when empty (the warm-up requests come first, as always):

1. ``probe``: one single request per prompt at its shortest length (repeat 0), then one batch at
   each concurrency the objectives read (``first``, in the order given). On the article's suite it
   is about a minute of GPU time out of twenty, and already fixes the sweep objectives.
2. ``single 1/R``: the rest of the first pass over the single-request rows (every prompt x length).
3. ``single 2/R`` ... ``single R/R``: one more pass each (``single.repeats`` = R).
4. ``sweep``: the remaining batches: the other concurrencies in the suite's order, and repeated
   batches (``sweep.repeats`` > 1) of the objectives' ones.

With adaptive repeats (``suite.adaptive``) the fixed minimum follows this plan and the extra
repeats a row needs come at the end of the last stage (:mod:`tuner.bench.runner`).

Contract: every request the article's order (:meth:`Suite.single_prompts` x lengths x repeats, then
the sweep) makes is in exactly one stage, and no other: the plan reorders the suite, it never
changes what is measured.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..config.suite import Suite

#: the first stage's name (what a study decides on first)
PROBE = "probe"


@dataclass(frozen=True)
class SingleStep:
    prompt: str  #: the prompt's name in the suite
    max_tokens: int
    repeat: int


@dataclass(frozen=True)
class SweepStep:
    concurrency: int
    repeat: int


@dataclass(frozen=True)
class Stage:
    name: str
    single: tuple[SingleStep, ...] = ()
    sweep: tuple[SweepStep, ...] = ()


def stage_plan(suite: Suite, first: Sequence[int] = ()) -> list[Stage]:
    """The stages of ``suite`` (see the module docstring); ``first``: the sweep concurrencies the
    study's objectives read (ignored when the suite does not sweep them)."""
    rows = [(p.name, n) for p in suite.single_prompts() for n in suite.single_lengths(p)]
    shortest: dict[str, int] = {}
    for name, n in rows:
        shortest[name] = min(n, shortest.get(name, n))
    probe_single = tuple(SingleStep(name, n, 0) for name, n in shortest.items())
    swept = list(suite.sweep.concurrencies)
    firsts = [c for c in dict.fromkeys(first) if c in swept]
    stages = [Stage(PROBE, probe_single, tuple(SweepStep(c, 0) for c in firsts))]
    repeats = suite.single.repeats
    done = set(probe_single)
    for r in range(repeats):
        steps = tuple(s for s in (SingleStep(name, n, r) for name, n in rows) if s not in done)
        stages.append(Stage(f"single {r + 1}/{repeats}", steps))
    early = {SweepStep(c, 0) for c in firsts}
    rest = tuple(s for c in swept for s in (SweepStep(c, r) for r in range(suite.sweep.repeats)) if s not in early)
    stages.append(Stage("sweep", (), rest))
    return [s for s in stages if s.single or s.sweep]


def complete_after(plan: Sequence[Stage], concurrency: int | None) -> int:
    """The index of the stage after which a figure has all its requests: the single-request figure
    (``concurrency`` None) or the aggregate at a sweep concurrency. After it, the figure is final:
    a partial estimate of it has no error left."""
    last = -1
    for i, stage in enumerate(plan):
        steps = stage.single if concurrency is None else [s for s in stage.sweep if s.concurrency == concurrency]
        if steps:
            last = i
    return last


def requests_until(plan: Sequence[Stage], concurrency: int | None, stage: int) -> tuple[int, int]:
    """``(measured, total)``: how many of a figure's requests (single) or batches (sweep at
    ``concurrency``) the stages up to ``stage`` hold, and how many the whole plan holds."""
    def count(stages) -> int:
        if concurrency is None:
            return sum(len(s.single) for s in stages)
        return sum(1 for s in stages for b in s.sweep if b.concurrency == concurrency)

    return count(plan[:stage + 1]), count(plan)
