"""What one measurement means for its trial: status, objective values and the attributes stored.

Pure functions of a :class:`tuner.engine.backends.Measurement` and the baseline's figures; the
trial runner (:mod:`tuner.engine.trial`) writes what they return. A measurement that cannot be
compared (a figure an objective needs is missing) is ``incomplete``; a server that ran another
setting than asked is ``args_mismatch``: both are failed trials, never values on the front.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..sglang.rules import SpecConfig
from .objectives import objective_values
from .records import FAILED, MEASURED, StoredFigures, figure_attrs

#: Attributes a reused trial copies from the measurement it reuses, besides the figures.
FAILURE_KEYS = ("failure_class", "failure_message", "log_tail")


@dataclass
class TrialOutcome:
    """A measured trial's verdict: ``status`` (measured or failed), its objective ``values`` (None
    when they could not be computed) and every attribute to store."""

    status: str
    values: list[float] | None
    attrs: dict


def judge_measurement(m, spec: SpecConfig, objectives, baseline: StoredFigures) -> TrialOutcome:
    """Status, values and attributes of a trial's measurement ``m`` against the ``baseline``."""
    attrs = measurement_attrs(m, spec)
    values, status = None, FAILED
    if not m.failure_class:
        try:
            values = objective_values(objectives, m.figures, baseline)
            status = MEASURED
        except ValueError as exc:
            attrs.update(failure_class="incomplete", failure_message=str(exc))
    if status == MEASURED and attrs.get("args_mismatch"):
        status = FAILED
        attrs.update(failure_class="args_mismatch", failure_message=(
            f"the server ran {attrs.get('resolved_spec')} instead of {spec.label()}: "
            "SGLang rewrote the setting in a way tuner.sglang.rules does not know"))
    if status == MEASURED:
        attrs.update(speedups(m.figures, baseline))
    return TrialOutcome(status, values, attrs)


def is_figure(key: str) -> bool:
    """Whether a trial attribute is a measured figure (copied when a trial reuses a measurement)."""
    return "tok_per_s" in key or "latency" in key or "ttft" in key or key.startswith(("accept_length", "speedup@",
                                                                                       "single_speedup", "errors@"))


def speedups(figures, base: StoredFigures) -> dict:
    """``single_speedup`` and ``speedup@C`` for every concurrency the baseline measured."""
    out = {}
    if figures.single_tok_per_s and base.single_tok_per_s:
        out["single_speedup"] = figures.single_tok_per_s / base.single_tok_per_s
    for c, b in base.tok_per_s.items():
        v = figures.tok_per_s_at(c)
        if v is not None and b:
            out[f"speedup@{c}"] = v / b
    return out


def measurement_attrs(m, spec: SpecConfig | None) -> dict:
    """Every attribute of a measurement, JSON-safe: figures, failure, resolved args, provenance."""
    attrs: dict[str, Any] = {"duration_s": round(m.duration_s, 3), "log_path": m.log_path}
    if m.failure_class:
        attrs.update(failure_class=m.failure_class, failure_message=m.failure_message,
                     log_tail=m.log_tail)
    if m.figures is not None:
        attrs.update(figure_attrs(m.figures))
        resolved = getattr(m.figures, "resolved_spec", None)
        if resolved is not None and spec is not None:
            attrs["resolved_spec"] = resolved.label()
            attrs["args_mismatch"] = resolved != spec
        info = getattr(m.figures, "server_info", None)
        if info:
            attrs["server_args"] = {k: v for k, v in info.items() if isinstance(v, (int, float, str, bool))}
        version = getattr(m.figures, "server_version", None)
        if version:
            attrs["sglang_version"] = version
        if getattr(m, "result_path", None):
            attrs["suite_json"] = m.result_path
    return json.loads(json.dumps(attrs, default=str))
