"""The settings every study measures first (``default_seed_trials: true``), whatever the sampler.

Kept apart from the samplers so that creating a study (:mod:`tuner.engine.study`) needs none of them.
"""

from __future__ import annotations

from ..sglang.rules import AUTO_CHOICE, SpecConfig

#: Measured first in every study (when in the space): SGLang's automatic choice, the article's
#: setting (num_steps=1, topk=1, draft tokens=3, which SGLang runs with 2 draft tokens), then a
#: medium and a large tree from SGLang's own grid (scripts/playground/bench_speculative.py: steps
#: 1-7, topk up to 8, draft tokens up to 32). Acceptance grows with the
#: steps and the tree while the verify cost grows with the verified tokens, so the single-request
#: optimum lies at a large tree and the high-concurrency one at a small one: the four seeds put the
#: search near both ends of the front from the start.
DEFAULT_SEED_TRIALS = (SpecConfig(*AUTO_CHOICE), SpecConfig(1, 1, 3), SpecConfig(4, 4, 16), SpecConfig(5, 8, 32))
