"""The warning an export gives when its pick loses to the autoregressive baseline: everywhere, or on
the very objective ``--pick`` chose it by."""

from __future__ import annotations

from ..engine.records import TrialRecord
from .pareto import single_objective, throughput_objective


def _speedup(name: str) -> bool:
    return name == "single_speedup" or name.startswith("speedup@")


def slower_than_baseline(config, record: TrialRecord, pick: str | None = None, confirmed=None) -> list[str]:
    """A warning when every objective is a speedup over the baseline and the pick reads below 1 on
    each: the study's best is slower than serving with no speculation at all (a draft head that
    does not fit the model, or a node where verifying costs more than it saves). The YAML is still
    written -- it is what was asked for -- but the user should know it loses.

    With ``pick`` ``single`` or ``throughput``, also when the objective that pick maximizes is a
    speedup below 1 (the others not all below): the best setting at that load is slower there than
    no speculation. QA (qa156): on a node where speculation wins at one request and loses at C=32
    (the article's Kimi K2.6 over PCIe at 32 is 1.05x; a table below 1 everywhere at 32),
    ``--pick throughput`` wrote a 0.96x pick with no word.

    ``confirmed``: the pick's :class:`~tuner.results.confirmed.ConfirmedCandidate` when a confirmation
    measured it in two rounds or more: its paired repeats are judged instead of the study's readings,
    a loss only below 1 beyond noise (the top of its 95% interval; QA,
    qa192: a 0.96x reading warned "slower than the baseline" under a header confirming 1.04x
    [1.01, 1.06], gains beyond noise)."""
    names = list(config.objectives)
    if confirmed is not None and all(n in confirmed.values for n in names):
        # judged below 1 beyond noise only: by the top of its 95% interval (a mean below 1 within noise
        # is no loss the confirmation can tell)
        intervals = [confirmed.values[n] for n in names]
        values = [iv.mean if iv.hi is None else iv.hi for iv in intervals]
        shown = [f"{iv.mean:.2f}x" + ("" if iv.hi is None else f" [{iv.lo:.2f}, {iv.hi:.2f}]") for iv in intervals]
        measured = "the confirmation measured"
    else:
        values = list(record.values or [])
        if not names or len(values) != len(names):
            return []
        shown = [None if v is None else f"{v:.2f}x" for v in values]
        measured = "what was measured"
    read = ", ".join(f"{n} {text}" for n, text in zip(names, shown) if text is not None)
    if all(_speedup(n) for n in names) and all(v is not None and v < 1.0 for v in values):
        return [f"trial {record.number} is slower than the autoregressive baseline on every objective ({read}): "
                f"serving without speculative decoding would be faster on {measured}"]
    chosen = {"single": single_objective, "throughput": throughput_objective}.get(pick or "")
    if chosen is None:
        return []
    name = chosen(names)
    at = names.index(name)
    if not _speedup(name) or values[at] is None or values[at] >= 1.0:
        return []
    return [f"trial {record.number}, the best by {name} (--pick {pick}), is slower than the autoregressive "
            f"baseline there ({name} {shown[at]}): at that load serving without speculative decoding would be "
            f"faster on {measured} ({read})"]
