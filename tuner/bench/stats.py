"""Small statistics for benchmark figures: a mean with its spread, and percentiles.

Every figure the suite reports is a :class:`Figure`: the mean of ``n`` measurements, their sample
standard deviation, the coefficient of variation (sd / mean) and the relative half-width of the 95%
confidence interval of the mean (Student t). With one measurement the spread is unknown: ``sd``,
``cv`` and ``rel_ci95`` are ``None``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Iterable

# Two-sided 95% Student t quantiles t(0.975, df) for df = 1..30.
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
         2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
         2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)
#: the normal 0.975 quantile
_Z975 = 1.959963984540054


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (df >= 1), to 3 decimals.

    Past the table, the Cornish-Fisher expansion of t around the normal quantile (Abramowitz and
    Stegun 26.7.5, four terms: within 1e-6 from df = 30 on). The normal 1.96 alone was 3.9% below
    t at df = 31 and 2% at 60 (QA: a row of 32 adaptive repeats stopped with its interval 3.9% wider
    than the rel_ci95 asked, and said so narrower)."""
    if df <= len(_T975):
        return _T975[df - 1]
    z, v = _Z975, float(df)
    return (z + (z ** 3 + z) / (4 * v) + (5 * z ** 5 + 16 * z ** 3 + 3 * z) / (96 * v ** 2)
            + (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / (384 * v ** 3)
            + (79 * z ** 9 + 776 * z ** 7 + 1482 * z ** 5 - 1920 * z ** 3 - 945 * z) / (92160 * v ** 4))


@dataclass(frozen=True)
class Figure:
    """The mean of ``n`` measurements and its spread (units are those of the name holding it)."""

    mean: float
    n: int
    sd: float | None = None
    cv: float | None = None  #: coefficient of variation, sd / mean
    rel_ci95: float | None = None  #: half-width of the 95% interval of the mean, relative to it

    def scaled(self, factor: float) -> "Figure":
        """The same figure in other units (cv and rel_ci95 do not change)."""
        sd = None if self.sd is None else self.sd * factor
        return Figure(self.mean * factor, self.n, sd, self.cv, self.rel_ci95)

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict | None) -> "Figure | None":
        return None if d is None else cls(**d)


def figure(values: Iterable[float]) -> Figure | None:
    """Summarize measurements; ``None`` when there are none."""
    xs = [float(v) for v in values]
    n = len(xs)
    if n == 0:
        return None
    mean = sum(xs) / n
    if n == 1:
        return Figure(mean, 1)
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1))
    if mean == 0:
        return Figure(mean, n, sd)
    cv = sd / abs(mean)
    return Figure(mean, n, sd, cv, t975(n - 1) * sd / math.sqrt(n) / abs(mean))


def percentile(values: Iterable[float], q: float) -> float | None:
    """The q-th percentile (0..100), linear interpolation between order statistics (numpy's default)."""
    return percentile_of_sorted(sorted(float(v) for v in values), q)


def percentile_of_sorted(xs: list[float], q: float) -> float | None:
    """:func:`percentile` of values already sorted (floats): several percentiles of one sample sort it
    once (a trial's stored figures ask 4 of each latency metric at every concurrency, and a C=32 sweep
    of long answers holds tens of thousands of inter-token gaps, sorted again for each before)."""
    if not xs:
        return None
    pos = (len(xs) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def narrow_enough(values: list[float], rel_ci95: float) -> bool:
    """True once the 95% interval of the mean of ``values`` is within ``rel_ci95`` of the mean."""
    fig = figure(values)
    return fig is not None and fig.rel_ci95 is not None and fig.rel_ci95 <= rel_ci95
