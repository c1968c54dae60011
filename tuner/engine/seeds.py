"""The settings every study measures first (``default_seed_trials: true``), whatever the sampler.

Kept apart from the samplers so that creating a study (:mod:`tuner.engine.study`) needs none of them.
"""

from __future__ import annotations

from ..sglang.rules import AUTO_CHOICE, SpecConfig

#: Measured first in every study (when in the space): SGLang's automatic choice (what a server gets
#: untuned, the reference a user compares with), then two of the settings most often within 3% of
#: an optimum on the benchmark's training landscapes (benchmarks/searchbench: (4, 8, 64) of the
#: single-request one on 31 of 60, more than any other; (2, 4, 8) of the high-concurrency one on 8),
#: and the large tree of SGLang's own grid (scripts/playground/bench_speculative.py: steps 1-7,
#: topk up to 8, draft tokens up to 32). Acceptance grows with the steps and the tree while the
#: verify cost grows with the verified tokens, so the single-request optimum lies at a large tree
#: and the high-concurrency one at a small one: the seeds put the search near both ends of the
#: front from the start. Chosen on the training set against the seeds before (the article's
#: (1, 1, 3) and SGLang's medium (4, 4, 16) in place of (4, 8, 64) and (2, 4, 8)) and other sets
#: of such settings; README, "How the tuner searches".
DEFAULT_SEED_TRIALS = (SpecConfig(*AUTO_CHOICE), SpecConfig(4, 8, 64), SpecConfig(2, 4, 8),
                       SpecConfig(5, 8, 32))
