"""The 95% interval past 30 degrees of freedom is Student's, not the normal's (QA: t975 fell back to
1.96 from df = 31 on, 3.9% below t(0.975, 31) = 2.0395, against its comment's "within 2%": a row of 32
adaptive repeats stopped with an interval 3.9% wider than the rel_ci95 asked, and reported it narrower).
scipy (a dependency of the tuner's surrogate) gives the reference."""

import math

import pytest
from scipy.stats import t

from tuner.bench.stats import figure, narrow_enough, t975


def test_t975_is_students_quantile_at_every_df():
    for df in range(1, 3000):
        assert t975(df) == pytest.approx(t.ppf(0.975, df), rel=3e-4), df


def test_the_interval_of_32_measurements_is_students():
    values = [100.0 + (-1) ** i * (1 + i % 5) for i in range(32)]
    fig = figure(values)
    mean = sum(values) / 32
    sd = math.sqrt(sum((x - mean) ** 2 for x in values) / 31)
    assert fig.rel_ci95 == pytest.approx(t.ppf(0.975, 31) * sd / math.sqrt(32) / mean, rel=1e-6)
    # an adaptive row asking for exactly the normal's width is not narrow enough yet
    assert not narrow_enough(values, 1.96 * sd / math.sqrt(32) / mean * 1.01)
    assert narrow_enough(values, fig.rel_ci95 * 1.0001)
