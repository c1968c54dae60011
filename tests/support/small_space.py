"""A search space of four settings, for the tests that run a study only for what it does with its
files, storage, flags or hardware, never for what the sampler picks.

Every ``tuner study run`` enumerates its space's effective settings a few times (preflight, the
sampler, the trial's rule check: ``tuner.config.space.effective_configs``); the shipped eagle3 space
holds 2,016 proposals, about a third of a one-launch run's CPU on the performance model. This one
holds (1, 1, 2) to (4, 1, 5): topk 1, where SGLang replaces any other draft-token count with
steps + 1 (speculative_hook.py; tuner.sglang.rules mirrors it); the first default seed, (3, 1, 4),
lies in it, so a study's first launch is the one it would be on the shipped space, and four
settings let a study run a few trials before its space is spent.
"""

from __future__ import annotations

from pathlib import Path

SMALL_SPACE = """algorithm: EAGLE3
params:
  speculative_num_steps: {choices: [1, 2, 3, 4]}
  speculative_eagle_topk: {choices: [1]}
  speculative_num_draft_tokens: {low: 2, high: 5}
"""


def small_space(folder: Path) -> Path:
    """:data:`SMALL_SPACE` written as ``folder/small-space.yaml`` (``folder`` exists); its path."""
    path = Path(folder) / "small-space.yaml"
    path.write_text(SMALL_SPACE)
    return path
