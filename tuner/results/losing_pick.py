"""The warning an export gives when its pick loses to the autoregressive baseline: everywhere, or on
the very objective ``--pick`` chose it by."""

from __future__ import annotations

from ..engine.records import TrialRecord
from .pareto import single_objective, throughput_objective


def _speedup(name: str) -> bool:
    return name == "single_speedup" or name.startswith("speedup@")


def slower_than_baseline(config, record: TrialRecord, pick: str | None = None) -> list[str]:
    """A warning when every objective is a speedup over the baseline and the pick reads below 1 on
    each: the study's best is slower than serving with no speculation at all (a draft head that
    does not fit the model, or a node where verifying costs more than it saves). The YAML is still
    written -- it is what was asked for -- but the user should know it loses.

    With ``pick`` ``single`` or ``throughput``, also when the objective that pick maximizes is a
    speedup below 1 (the others not all below): the best setting at that load is slower there than
    no speculation. QA (qa156): on a node where speculation wins at one request and loses at C=32
    (the article's Kimi K2.6 over PCIe at 32 is 1.05x; a table below 1 everywhere at 32),
    ``--pick throughput`` wrote a 0.96x pick with no word."""
    names = list(config.objectives)
    values = record.values or []
    if not names or len(values) != len(names):
        return []
    read = ", ".join(f"{n} {v:.2f}x" for n, v in zip(names, values) if v is not None)
    if all(_speedup(n) for n in names) and all(v is not None and v < 1.0 for v in values):
        return [f"trial {record.number} is slower than the autoregressive baseline on every objective ({read}): "
                f"serving without speculative decoding would be faster on what was measured"]
    chosen = {"single": single_objective, "throughput": throughput_objective}.get(pick or "")
    if chosen is None:
        return []
    name = chosen(names)
    value = values[names.index(name)]
    if not _speedup(name) or value is None or value >= 1.0:
        return []
    return [f"trial {record.number}, the best by {name} (--pick {pick}), is slower than the autoregressive "
            f"baseline there ({name} {value:.2f}x): at that load serving without speculative decoding would be "
            f"faster on what was measured ({read})"]
