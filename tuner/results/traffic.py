"""What a study's measurements were taken under, and what they must meet, as lines for people:
the workload (suite, dataset, API, temperature), the latency SLOs of a trial and of the baseline,
and the lossless check. One place, so status, pareto, export and the report say the same thing.
"""

from __future__ import annotations

from typing import Any

from ..config.wording import counted
from ..engine.limits import SLO_ATTR, broken, check_text


def limits_note(attrs: dict) -> str:
    """What a measurement breaks, for people: ``"breaks ttft_p99_ms@32 2310 > 2000 (+15.5%)"``
    ("" when it meets every limit)."""
    parts = [check_text(c) for c in broken(attrs.get(SLO_ATTR))]
    if attrs.get("lossless_flag"):
        parts.append(f"lossless {attrs.get('lossless_share', 0):.0%} < {attrs.get('lossless_min_share', 0):.0%}"
                     + (" (enforced)" if attrs.get("lossless_enforced") else ""))
    return ("breaks " + "; ".join(parts)) if parts else ""


def workload_lines(workload: dict | None, config: Any) -> list[str]:
    """The suite's requests, the API and the sampling temperature."""
    from ..bench.workload import workload_line

    bench = getattr(config, "bench", None)
    api = f"api {bench.api}" + (", streamed" if bench.stream else "") if bench else ""
    if not workload:
        return [f"workload: {api}" if api else "workload: not recorded"]
    return [f"workload: {workload_line(workload)}" + (f"; {api}" if api else "")]


def slo_lines(attrs: dict | None, who: str = "this setting") -> list[str]:
    """Each limit met or broken; nothing when the study has no SLOs."""
    checks = (attrs or {}).get(SLO_ATTR)
    if not checks:
        return []
    bad = broken(checks)
    if not bad:
        return [f"latency SLOs: {who} meets every limit: " + "; ".join(check_text(c) for c in checks)]
    return [f"latency SLOs: {who} BREAKS " + "; ".join(check_text(c) for c in bad)]


def baseline_slo_lines(baseline: dict | None) -> list[str]:
    """Says when the autoregressive baseline breaks the study's limits itself."""
    checks = (baseline or {}).get(SLO_ATTR)
    if not checks:
        return []
    bad = broken(checks)
    if not bad:
        return ["latency SLOs: the baseline meets every limit"]
    return ["latency SLOs: the baseline itself breaks " + "; ".join(check_text(c) for c in bad)
            + " (the limits may be out of reach of this server)"]


def lossless_line(attrs: dict | None) -> str | None:
    """The lossless check of one trial, or None when it did not apply."""
    a = attrs or {}
    if a.get("lossless_compared") is None:
        return None
    share, n, same = a.get("lossless_share") or 0.0, a["lossless_compared"], a.get("lossless_identical", 0)
    text = f"lossless check: {same}/{n} single-request outputs identical to the baseline's ({share:.0%})"
    first = a.get("lossless_first_divergence")
    if first:
        text += f"; first divergence at character {first['position']} of {first['prompt']} ({counted(first['max_tokens'], 'token')})"
    if a.get("lossless_flag"):
        text += f"; FLAGGED: below {a.get('lossless_min_share', 0):.0%}" + (
            " (enforced: infeasible)" if a.get("lossless_enforced") else " (reported, not enforced)")
    return text
