"""How many draft tokens the target model accepts: prompt predictability, per-depth acceptance, trees.

The draft head proposes, at every depth, a ranked list of tokens. The target's next token is the
draft's rank-1 token with probability ``alpha_d`` (the per-depth acceptance: EAGLE-3 stays near
0.75-0.8 per depth in its paper, a little lower deeper in the chain), otherwise one of the lower
ranks with geometrically falling shares (``alternative_share``), which is what makes top-k trees
pay off with diminishing returns.

The tree SGLang verifies mirrors ``organize_draft_results`` (python/sglang/srt/speculative/
eagle_utils.py): depth 1 has ``topk`` candidates, each later depth expands the ``topk`` best nodes of
the depth before into ``topk`` children each, and ``torch.topk`` over the path scores of all
candidates picks the ``num_draft_tokens - 1`` verified nodes. Here the score of a node is its path
probability, so the verified tree is the set of the highest path-probability nodes (always closed
under ancestors: a child never scores above its parent). The expected accepted length is
``1 + sum of the verified nodes' path probabilities`` (the 1 is the bonus token the target
always contributes).
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from functools import lru_cache

from ..sglang.rules import SpecConfig
from .profile import AcceptanceSpec

# Prompt features that make the next token easy or hard to guess. Weights are added to 0.5; the
# sum is clipped to [0.05, 0.95]. Code, structured output and arithmetic are repetitive and
# constrained (EAGLE papers report their highest acceptance on code and math); short creative text
# such as a haiku is the least predictable.
_FEATURES: tuple[tuple[str, float, re.Pattern], ...] = tuple(
    (name, weight, re.compile(pattern, re.IGNORECASE))
    for name, weight, pattern in (
        ("code", 0.22, r"\b(python|function|def|class|implement\w*|code|program|script|algorithm|"
                       r"quicksort|sort\w*|return[s]?|docstring|tests?|sql|javascript|rust|java|c\+\+)\b"),
        ("structured", 0.30, r"\b(json|yaml|xml|csv|table|schema|object)\b|[{}\[\]]"),
        ("arithmetic", 0.18, r"\d+\s*[-+*/^]\s*\d+|\b(compute|calculate|arithmetic|sum|equation)\b"),
        ("listing", 0.05, r"\b(list|step by step|steps|every step)\b"),
        ("creative", -0.25, r"\b(haiku|poem|poetry|sonnet|story|lyrics|creative|imagine|metaphor)\b"),
        ("explain", -0.04, r"\b(explain|why|describe|opinion)\b"),
    )
)


def predictability(text: str) -> float:
    """How guessable a prompt's continuation is, in [0, 1]; deterministic.

    Code and JSON score high, a haiku low; text with no feature gets a mid value (0.5 plus a small
    jitter derived from a hash of the text, so different unknown prompts differ a little).
    """
    score = 0.5
    for _name, weight, pattern in _FEATURES:
        if pattern.search(text):
            score += weight
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    score += (digest[0] / 255.0 - 0.5) * 0.04
    return min(0.95, max(0.05, score))


def depth_acceptance(acc: AcceptanceSpec, pred: float, depth: int) -> float:
    """Probability that the target's token at ``depth`` (1-based) is the draft's rank-1 token."""
    alpha = acc.alpha_low + (acc.alpha_high - acc.alpha_low) * pred
    return alpha * acc.depth_decay ** (depth - 1)


def rank_probability(alpha: float, share: float, rank: int) -> float:
    """Probability that the target's token is the draft's rank-``rank`` token (1-based)."""
    if rank == 1:
        return alpha
    return (1.0 - alpha) * share * (1.0 - share) ** (rank - 2)


@lru_cache(maxsize=65536)
def _verified_tree(steps: int, topk: int, draft_tokens: int, alphas: tuple[float, ...],
                   share: float) -> tuple[frozenset, float]:
    """(verified nodes as rank paths, sum of their path probabilities) for one tree shape."""
    candidates: list[tuple[float, int, tuple[int, ...]]] = []
    level = [(rank_probability(alphas[0], share, r), (r,)) for r in range(1, topk + 1)]
    for depth in range(1, steps + 1):
        candidates.extend((p, depth, path) for p, path in level)
        if depth == steps:
            break
        beams = sorted(level, key=lambda x: (-x[0], x[1]))[:topk]
        level = [(p * rank_probability(alphas[depth], share, r), path + (r,))
                 for p, path in beams for r in range(1, topk + 1)]
    candidates.sort(key=lambda x: (-x[0], x[1], x[2]))
    chosen = candidates[: max(0, draft_tokens - 1)]
    return frozenset(path for _, _, path in chosen), sum(p for p, _, _ in chosen)


def _alphas(acc: AcceptanceSpec, pred: float, steps: int) -> tuple[float, ...]:
    return tuple(round(depth_acceptance(acc, pred, d), 12) for d in range(1, steps + 1))


def tree_shape(spec: SpecConfig) -> tuple[int, int, int]:
    """(num_steps, topk, num_draft_tokens) with SGLang's defaults for unset flags."""
    steps = spec.num_steps or 1
    topk = spec.eagle_topk or 1
    draft = spec.num_draft_tokens if spec.num_draft_tokens is not None else steps + 1
    return steps, topk, draft


def mean_accept_length(acc: AcceptanceSpec, spec: SpecConfig, pred: float) -> float:
    """Expected tokens per verify step per request, bonus token included (>= 1)."""
    steps, topk, draft = tree_shape(spec)
    _, total = _verified_tree(steps, topk, draft, _alphas(acc, pred, steps), acc.alternative_share)
    return 1.0 + total


def sample_accept_length(acc: AcceptanceSpec, spec: SpecConfig, pred: float, rng: random.Random) -> int:
    """One verify step: walk the target's tokens down the verified tree; 1 .. num_steps + 1.

    At each depth the target's token is drawn from the rank distribution; the walk continues while
    the path so far is a verified node. Its mean is exactly :func:`mean_accept_length`.
    """
    steps, topk, draft = tree_shape(spec)
    alphas = _alphas(acc, pred, steps)
    nodes, _ = _verified_tree(steps, topk, draft, alphas, acc.alternative_share)
    share = acc.alternative_share
    path: tuple[int, ...] = ()
    for depth in range(steps):
        alpha = alphas[depth]
        u = rng.random()
        if u < alpha:
            rank = 1
        else:
            v = (u - alpha) / (1.0 - alpha)  # uniform in [0, 1): geometric rank among the rest
            rank = 2 + int(math.log1p(-v) / math.log1p(-share)) if v > 0 else 2
        path += (rank,)
        if path not in nodes:
            return 1 + depth
    return 1 + steps
