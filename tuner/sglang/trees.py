"""Which EAGLE settings verify the same draft tree: settings SGLang cannot tell apart in what it checks.

SGLang 0.5.23 builds the verified tree in ``organize_draft_results``
(``python/sglang/srt/speculative/eagle_utils.py``): the first draft step scores ``topk`` tokens,
every later step expands the ``topk`` best nodes of the step before into ``topk`` children, and
``torch.topk(scores, num_draft_tokens - 1)`` over every candidate's path score picks the verified
nodes. A path score is a product of draft probabilities, so a child never outscores its parent and
the verified set is closed under ancestors. Two consequences hold for any draft model:

* a verified node at depth ``j`` brings its ``j - 1`` ancestors, so no verified node lies deeper
  than ``num_draft_tokens - 1``: steps beyond that only draft tokens nobody verifies;
* with ``topk >= num_draft_tokens - 1`` the beam and the children at every depth already hold every
  node the ``num_draft_tokens - 1`` best could use, so a wider ``topk`` changes nothing verified.

So ``(steps, topk, draft)`` verifies exactly what ``(min(steps, draft - 1), min(topk, draft - 1),
draft)`` verifies: :func:`tree_key`. Settings with one key accept the same tokens; the cheapest of
them (fewest steps, then smallest topk) drafts the least, so it is never slower. For example every
``(s, k, 2)`` verifies the draft's single best token, and ``(4, 2, 5)``, ``(4, 4, 5)``, ``(4, 8, 5)``
all verify the best four nodes of depth at most 4.
"""

from __future__ import annotations

from typing import Iterable

from .rules import SpecConfig


def tree_key(spec: SpecConfig) -> tuple[int, int, int]:
    """What SGLang verifies for an effective setting: (depth cap, width cap, draft tokens)."""
    cap = spec.num_draft_tokens - 1
    return min(spec.num_steps, cap), min(spec.eagle_topk, cap), spec.num_draft_tokens


def cheapest_per_tree(specs: Iterable[SpecConfig]) -> dict[tuple[int, int, int], SpecConfig]:
    """For every tree key among ``specs``, the setting that drafts the least (fewest steps, then the
    smallest topk): the one worth measuring."""
    out: dict[tuple[int, int, int], SpecConfig] = {}
    for spec in specs:
        key = tree_key(spec)
        best = out.get(key)
        if best is None or (spec.num_steps, spec.eagle_topk) < (best.num_steps, best.eagle_topk):
            out[key] = spec
    return out
