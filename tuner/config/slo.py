"""Latency SLOs of a study file (``slo:``): per-concurrency limits on TTFT, ITL and end-to-end
latency at a percentile, as the study file spells them::

    slo:
      - {concurrency: 32, ttft_p99_ms: 2000, itl_p99_ms: 60}
      - {concurrency: 8, e2e_p90_ms: 30000}

A limit is ``METRIC_pQ_ms`` with METRIC ``ttft`` (time to first token), ``itl`` (inter-token
latency: every gap between tokens, pooled over the requests, as SGLang's ``bench_serving`` ITL),
``tpot`` (time per output token after the first, one value per request: ``(e2e - ttft) / (tokens -
1)``, as ``bench_serving`` TPOT and vLLM's SLA tools) or ``e2e`` (end-to-end latency), and Q one of
:data:`PERCENTILES`; the value is in milliseconds (model time on the simulator). Which trials meet them is the engine's
(:mod:`tuner.engine.slo`); this module only holds the validated limits.
"""

from __future__ import annotations

import math
import re
from typing import Any

from pydantic import Field, model_validator

from .yamlfile import StrictModel, did_you_mean

METRICS = ("ttft", "itl", "tpot", "e2e")
PERCENTILES = (50, 90, 95, 99)
LIMIT_KEY = re.compile(r"(ttft|itl|tpot|e2e)_p(50|90|95|99)_ms")
#: every limit key a file may spell, for "did you mean"
LIMIT_KEYS = tuple(f"{m}_p{q}_ms" for m in METRICS for q in PERCENTILES)
#: metrics that need streamed responses (a complete answer has no first-token time)
STREAMED_METRICS = ("ttft", "itl", "tpot")


def parse_limit(key: str) -> tuple[str, int]:
    """``"ttft_p99_ms"`` -> ``("ttft", 99)``; ``ValueError`` for anything else."""
    m = LIMIT_KEY.fullmatch(key)
    if not m:
        raise ValueError(f"unknown limit {key!r}{did_you_mean(key, LIMIT_KEYS)}; expected METRIC_pQ_ms with METRIC ttft, itl, tpot or e2e "
                         f"and Q one of {', '.join(map(str, PERCENTILES))} (e.g. ttft_p99_ms)")
    return m.group(1), int(m.group(2))


class SLO(StrictModel):
    """The limits at one sweep concurrency. Stored as ``{concurrency, limits: {key: ms}}``."""

    concurrency: int = Field(ge=1)
    limits: dict[str, float]

    @model_validator(mode="before")
    @classmethod
    def _flat(cls, data: Any):
        # The file spells the limits beside the concurrency; storage keeps them grouped.
        if isinstance(data, dict) and "limits" not in data:
            data = dict(data)
            if "concurrency" not in data:
                # A misspelt concurrency (`concurency`, `Concurrency`) would read as a limit and the
                # entry as one without its concurrency: name the key the file spells, as for every
                # other key (QA: "slo[0].concurrency: required key is missing")
                for key in data:
                    meant = did_you_mean(key, ["concurrency"]) if not LIMIT_KEY.fullmatch(str(key)) else ""
                    if meant:
                        raise ValueError(f"{key}: unknown key{meant}")
            c = data.pop("concurrency", None)
            data = {"concurrency": c, "limits": data} if c is not None else {"limits": data}
        if isinstance(data, dict) and isinstance(data.get("limits"), dict):
            # checked here, before the field's type: an error names slo[i] and the file's key, not a
            # "limits" the file does not spell (QA: "slo[0].limits: dictionary should have at least 1
            # item", "slo[0].limits.ttft_p99_ms: input should be a valid number")
            if not data["limits"]:
                raise ValueError("give at least one limit beside the concurrency, e.g. ttft_p99_ms: 2000")
            for key, value in data["limits"].items():
                if isinstance(value, int) and not isinstance(value, bool) and len(str(abs(value))) > 18:
                    # math.isfinite would raise OverflowError on an int past a float's range
                    raise ValueError(f"{key} must be a positive number of milliseconds, got an integer of "
                                     f"{len(str(abs(value)))} digits")
                if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0 \
                        or not math.isfinite(value):
                    raise ValueError(f"{key} must be a positive number of milliseconds, got {value!r}")
        return data

    @model_validator(mode="after")
    def _known(self):
        for key in self.limits:
            parse_limit(key)
        return self

    def needs_stream(self) -> list[str]:
        return [k for k in self.limits if parse_limit(k)[0] in STREAMED_METRICS]
