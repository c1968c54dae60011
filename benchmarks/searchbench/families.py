"""Landscape families written independently of ``tuner/sim/model.py``: the other half of the test bed.

Each family draws, from one integer seed, a landscape table (:mod:`tuner.config.landscape`) over
every effective setting of the search space, with its own functional forms for acceptance and for
the cost of a step. What they share is SGLang's behaviour, not the simulator's model:

* **the verified tree** is built as SGLang 0.5.23 builds it (``speculative/eagle_utils.py``,
  ``organize_draft_results``: ``topk`` candidates at depth 1, the ``topk`` best nodes of each depth
  expanded into ``topk`` children, the ``num_draft_tokens - 1`` best-scoring candidates verified),
  re-implemented here in :func:`verified_nodes`, with the *draft's* scores -- which a family may
  make miscalibrated against the target's true acceptance;
* **accepted length** = 1 + the sum over verified nodes of the probability that the target agrees
  with the whole path (one bonus token always);
* **a speculative step** = the draft forwards (``num_steps``: ``B`` tokens, then ``B * topk``), a
  draft extend, and one target forward over ``B * num_draft_tokens`` tokens; an autoregressive step
  is one target forward over ``B`` tokens.

Families:

* **A** (train): Zipf-ranked draft alternatives, stretched-exponential decay with depth, three prompt
  classes, a draft whose scores are tempered (mis-calibrated); tile-quantized step cost with a
  bandwidth knee, and a CUDA-graph limit on verify tokens above which a step runs eager.
* **B** (test): Weibull survival along the chain, a heavy second rank and a flat tail, two prompt
  classes, a calibrated draft; power-law step cost with an all-reduce protocol jump.
* **C** (test): linear decay with depth, a Dirichlet-drawn rank profile, an over-confident draft;
  mixture-of-experts saturation cost (reads grow until every expert is touched, then compute);
  trees beyond a memory limit fail at launch (``"failure": "oom"`` rows).

Single-request figures include a prefill and are averaged over 256, 1024 and 2048 output tokens;
at C=32 a batch lasts as long as its slowest prompt class.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Callable, Sequence

LENGTHS = (256, 1024, 2048)
CONCURRENCY = 32
MAX_RANK = 8  #: ranks beyond this carry no probability worth a node


@dataclass(frozen=True)
class Acceptance:
    """Per depth (1-based) and rank (1-based): the target's agreement ``p`` and the draft's score ``q``."""

    p: Callable[[int, int], float]
    q: Callable[[int, int], float]


def verified_nodes(steps: int, topk: int, draft_tokens: int, q: Callable[[int, int], float]) -> list[tuple[int, ...]]:
    """The rank paths SGLang verifies (organize_draft_results, eagle_utils.py), scored by ``q``."""
    level = [((r,), q(1, r)) for r in range(1, topk + 1)]
    candidates = list(level)
    for depth in range(2, steps + 1):
        beams = sorted(level, key=lambda x: -x[1])[:topk]
        level = [(path + (r,), score * q(depth, r)) for path, score in beams for r in range(1, topk + 1)]
        candidates.extend(level)
    # torch.topk over the candidates' scores; ties to the earlier candidate (a parent before its child)
    order = sorted(range(len(candidates)), key=lambda i: (-candidates[i][1], i))
    return [candidates[i][0] for i in order[: draft_tokens - 1]]


def accept_length(nodes: Sequence[tuple[int, ...]], p: Callable[[int, int], float]) -> float:
    total = 1.0
    for path in nodes:
        total += math.prod(p(d + 1, r) for d, r in enumerate(path))
    return total


@dataclass(frozen=True)
class Costs:
    """Milliseconds: a target forward over ``n`` tokens (``graph``: within CUDA graphs), a draft
    forward over ``n`` tokens, the fixed part of a speculative step, a prefill."""

    target: Callable[[int], float]
    draft: Callable[[int], float]
    spec_overhead_ms: float
    prefill_ms: float
    eager_above: int | None = None  #: verify tokens above which a step runs eager
    eager_ms: float = 0.0


def step_ms(c: Costs, batch: int, spec) -> float:
    if spec is None:
        return c.target(batch)
    s, k, d = spec.num_steps, spec.eagle_topk, spec.num_draft_tokens
    t = c.spec_overhead_ms + c.draft(batch) + (s - 1) * c.draft(batch * k) + c.draft(batch * (s + 1))
    t += c.target(batch * d)
    if c.eager_above is not None and batch * d > c.eager_above:
        t += c.eager_ms
    return t


def figures(c: Costs, classes: Sequence[tuple[float, Acceptance]], spec) -> dict:
    """single_tok_per_s, tok_per_s@32 and accept_length of a setting (None: autoregressive)."""
    accepts = []
    for weight, acc in classes:
        if spec is None:
            accepts.append((weight, 1.0))
        else:
            nodes = verified_nodes(spec.num_steps, spec.eagle_topk, spec.num_draft_tokens, acc.q)
            accepts.append((weight, accept_length(nodes, acc.p)))
    mean_accept = sum(w * a for w, a in accepts)
    one = step_ms(c, 1, spec)
    rates = [n / ((c.prefill_ms + (n - 1) / mean_accept * one) / 1000) for n in LENGTHS]
    slowest = min(a for _, a in accepts)
    batch_accept = 0.5 * slowest + 0.5 * mean_accept  # a batch ends with its slowest requests
    tokens = 512
    t32 = (c.prefill_ms * 4 + (tokens - 1) / batch_accept * step_ms(c, CONCURRENCY, spec)) / 1000
    return {"single_tok_per_s": sum(rates) / len(rates), f"tok_per_s@{CONCURRENCY}": CONCURRENCY * tokens / t32,
            "accept_length": mean_accept}


# --------------------------------------------------------------------------------------------------
# The families' draws


def _classes_a(rng: random.Random) -> list[tuple[float, Acceptance]]:
    beta = rng.uniform(1.2, 2.6)
    zipf = [r ** -beta for r in range(2, MAX_RANK + 1)]
    z = sum(zipf)
    lam, eta, tau = rng.uniform(0.03, 0.25), rng.uniform(0.7, 1.4), rng.uniform(0.6, 1.5)
    out = []
    for weight in (0.4, 0.35, 0.25):
        a1 = rng.uniform(0.45, 0.92)

        def p(d, r, a1=a1):
            a = a1 * math.exp(-lam * (d - 1) ** eta)
            return a if r == 1 else (1 - a) * zipf[r - 2] / z * 0.9

        out.append((weight, Acceptance(p, lambda d, r, p=p: p(d, r) ** tau)))
    return out


def _costs_a(rng: random.Random) -> Costs:
    t0 = rng.uniform(6, 60)
    knee, slope, tile = rng.choice((8, 16, 32, 64, 128, 256, 512)), rng.uniform(0.2, 1.2), rng.choice((16, 32, 64))
    d0, dslope = t0 * rng.uniform(0.02, 0.12), rng.uniform(0.002, 0.03)

    def target(n):
        q = math.ceil(n / tile) * tile
        return t0 * (1 + slope * max(0, q - knee) / max(knee, tile))

    eager = rng.choice((None, 128, 256, 512))
    return Costs(target, lambda n: d0 * (1 + dslope * n), t0 * rng.uniform(0.01, 0.06), t0 * rng.uniform(2, 8),
                 eager, t0 * rng.uniform(0.1, 0.5))


def _classes_b(rng: random.Random) -> list[tuple[float, Acceptance]]:
    lam, kappa = rng.uniform(1.5, 8.0), rng.uniform(0.6, 1.6)
    w2, tail = rng.uniform(0.3, 0.7), rng.uniform(0.3, 0.9)
    out = []
    for weight, stretch in ((0.6, 1.0), (0.4, rng.uniform(1.2, 2.0))):
        def p(d, r, lam=lam * stretch):
            a = math.exp(-((d / lam) ** kappa) + (((d - 1) / lam) ** kappa))
            if r == 1:
                return a
            return (1 - a) * (w2 if r == 2 else (1 - w2) * tail / (MAX_RANK - 2))

        out.append((weight, Acceptance(p, p)))
    return out


def _costs_b(rng: random.Random) -> Costs:
    t0, gamma = rng.uniform(5, 50), rng.uniform(0.4, 1.1)
    ratio64 = rng.uniform(1.2, 6.0)  # a forward over 64 tokens costs this many single-token ones
    t1 = t0 * (ratio64 - 1) / 64 ** gamma
    bump_at, bump = rng.choice((32, 64, 128, 256)), t0 * rng.uniform(0.0, 0.4)
    d0, d1 = t0 * rng.uniform(0.03, 0.15), t0 * rng.uniform(0.0005, 0.01)
    return Costs(lambda n: t0 + t1 * n ** gamma + (bump if n > bump_at else 0.0), lambda n: d0 + d1 * n,
                 t0 * rng.uniform(0.01, 0.05), t0 * rng.uniform(1, 6))


def _classes_c(rng: random.Random) -> list[tuple[float, Acceptance]]:
    shape = sorted((rng.gammavariate(rng.uniform(0.3, 1.5), 1.0) for _ in range(MAX_RANK - 1)), reverse=True)
    total = sum(shape)
    mass = rng.uniform(0.6, 0.95)
    delta, confidence = rng.uniform(0.02, 0.1), rng.uniform(0.5, 0.9)
    out = []
    for weight in (0.5, 0.5):
        a1 = rng.uniform(0.55, 0.92)

        def p(d, r, a1=a1):
            a = max(0.05, a1 - delta * (d - 1))
            return a if r == 1 else (1 - a) * mass * shape[r - 2] / total

        def q(d, r, a1=a1):
            a = max(0.05, a1 - delta * (d - 1)) ** confidence  # over-confident in its first choice
            return a if r == 1 else (1 - a) * shape[r - 2] / total

        out.append((weight, Acceptance(p, q)))
    return out


def _costs_c(rng: random.Random) -> Costs:
    t0, mu, n_e = rng.uniform(8, 60), rng.uniform(0.3, 2.5), rng.uniform(4, 64)
    compute = t0 * rng.uniform(0.001, 0.02)
    d0, d_scale = t0 * rng.uniform(0.03, 0.12), rng.uniform(32, 512)
    return Costs(lambda n: t0 * (1 + mu * (1 - math.exp(-n / n_e))) + compute * n,
                 lambda n: d0 * (1 + n / d_scale), t0 * rng.uniform(0.01, 0.05), t0 * rng.uniform(2, 8))


FAMILIES = {"A": (_classes_a, _costs_a), "B": (_classes_b, _costs_b), "C": (_classes_c, _costs_c)}


def family_table(family: str, seed: int, configs) -> dict:
    """The landscape table of ``family`` drawn with ``seed`` over ``configs`` (effective settings)."""
    rng = random.Random(f"family:{family}:{seed}")
    draw_classes, draw_costs = FAMILIES[family]
    classes, costs = draw_classes(rng), draw_costs(rng)
    limit = rng.choice((None, None, 32, 48)) if family == "C" else None
    base = figures(costs, classes, None)
    rows = []
    for spec in configs:
        if limit is not None and spec.num_draft_tokens > limit:
            rows.append({**spec.as_dict(), "failure": "oom"})  # beyond the memory limit: it fails at launch
            continue
        f = figures(costs, classes, spec)
        rows.append({**spec.as_dict(), **{k: round(v, 4) for k, v in f.items()}})
    return {"name": f"{family}-{seed}", "description": f"landscape family {family} (benchmarks/searchbench/families.py)",
            "concurrency": CONCURRENCY, "load_s": 600,
            "baseline": {"single_tok_per_s": round(base["single_tok_per_s"], 4),
                         f"tok_per_s@{CONCURRENCY}": round(base[f"tok_per_s@{CONCURRENCY}"], 4)},
            "configs": rows}
