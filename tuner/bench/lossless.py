"""The lossless check: do a speculative server's greedy outputs match the autoregressive baseline's?

Speculative decoding verifies every drafted token with the target model, so at temperature 0 it
should produce exactly the baseline's text; numerical differences between the verify kernels and
the autoregressive ones (batch shapes, tree attention) can still flip a near-tie now and then, so a
mismatch is a finding to report, not proof of a bug.

Compared: every successful single request of a run (its ``output_text``) against the baseline's
output for the same prompt and length (the first successful repeat: greedy repeats are identical).
The first divergent position is counted in characters of the output text (the tuner has no
tokenizer; ``/generate`` and the OpenAI APIs all return text).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field


def output_key(prompt: str, max_tokens: int) -> str:
    return f"{prompt}@{max_tokens}"


def single_outputs(result) -> dict[str, str]:
    """``{"PROMPT@MAX_TOKENS": text}`` of a run's single requests (first successful repeat each)."""
    out: dict[str, str] = {}
    for r in result.records:
        if r.phase == "single" and r.ok and r.output_text is not None:
            out.setdefault(output_key(r.prompt, r.max_tokens), r.output_text)
    return out


def first_divergence(a: str, b: str) -> int | None:
    """The first character position where ``a`` and ``b`` differ (the shorter one's length when one
    is a prefix of the other); None when they are equal."""
    if a == b:
        return None
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


@dataclass
class LosslessCheck:
    """How many single requests matched the baseline's output, and where the first ones diverged."""

    compared: int
    identical: int
    #: the earliest divergence over all mismatches: {"prompt", "max_tokens", "position"}
    first_divergence: dict | None = None
    mismatches: list[dict] = field(default_factory=list)  #: up to 10, in the run's order

    @property
    def share(self) -> float | None:
        return None if not self.compared else self.identical / self.compared

    def to_attrs(self) -> dict:
        return {"lossless_share": self.share, "lossless_compared": self.compared,
                "lossless_identical": self.identical, "lossless_first_divergence": self.first_divergence,
                "lossless_mismatches": self.mismatches}

    def to_dict(self) -> dict:
        return {**asdict(self), "share": self.share}


def compare_outputs(baseline: dict[str, str], result) -> LosslessCheck | None:
    """The check of ``result``'s single requests against the baseline's outputs (None when no
    request of the run has a baseline output to compare with)."""
    compared = identical = 0
    mismatches: list[dict] = []
    earliest: dict | None = None
    for r in result.records:
        if r.phase != "single" or not r.ok or r.output_text is None:
            continue
        want = baseline.get(output_key(r.prompt, r.max_tokens))
        if want is None:
            continue
        compared += 1
        pos = first_divergence(want, r.output_text)
        if pos is None:
            identical += 1
            continue
        where = {"prompt": r.prompt, "max_tokens": r.max_tokens, "repeat": r.repeat, "position": pos}
        if len(mismatches) < 10:
            mismatches.append(where)
        if earliest is None or pos < earliest["position"]:
            earliest = where
    if not compared:
        return None
    return LosslessCheck(compared, identical, earliest, mismatches)
