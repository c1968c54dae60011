"""The warning an export gives when its pick loses to the autoregressive baseline everywhere."""

from __future__ import annotations

from ..engine.records import TrialRecord


def slower_than_baseline(config, record: TrialRecord) -> list[str]:
    """A warning when every objective is a speedup over the baseline and the pick reads below 1 on
    each: the study's best is slower than serving with no speculation at all (a draft head that
    does not fit the model, or a node where verifying costs more than it saves). The YAML is still
    written -- it is what was asked for -- but the user should know it loses."""
    names = list(config.objectives)
    values = record.values or []
    if not names or len(values) != len(names) or not all(
            n == "single_speedup" or n.startswith("speedup@") for n in names):
        return []
    if any(v is None or v >= 1.0 for v in values):
        return []
    read = ", ".join(f"{n} {v:.2f}x" for n, v in zip(names, values))
    return [f"trial {record.number} is slower than the autoregressive baseline on every objective ({read}): "
            f"serving without speculative decoding would be faster on what was measured"]
