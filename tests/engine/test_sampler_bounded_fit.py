"""The default sampler's Gaussian processes are fitted to at most ``MAX_FIT_READINGS`` readings: the
fit is cubic in them and its gradient quadratic in memory, so on a study of thousands of launches
every proposal took minutes and gigabytes (QA, qa186: 4m56s to the first launch of a 2,000-trial
study; none in 22 minutes at 5.2 GB on 10,000). Below the bound every reading is used, as before."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from tuner.config.space import SearchSpace
from tuner.engine.structured import Readings, StructuredSampler
from tuner.engine.surrogate import MAX_FIT_READINGS, fit_rows, one_blas_thread

SPACE = SearchSpace.load(Path(__file__).resolve().parents[2] / "search_spaces" / "eagle3.yaml")


def _readings(sampler: StructuredSampler, n: int) -> Readings:
    """``n`` readings over the candidates, a few settings read several times, of a smooth landscape."""
    out = Readings()
    rng = np.random.default_rng(3)
    keys = list(sampler._keys)
    for j in range(n):
        i = (j * 7) % len(keys)
        key = keys[i]
        out.spec.setdefault(key, sampler._specs[i])
        depth, width, draft = key[0], key[1], key[2]
        accept = 1 + min(depth, draft - 1) * 0.6 / (1 + 0.1 * width)
        single = accept / (1 + 0.02 * draft + 0.03 * depth) * rng.normal(1, 0.03)
        c32 = accept / (1 + 0.08 * draft + 0.05 * depth * width) * rng.normal(1, 0.03)
        out.values.setdefault(key, []).append([single, c32])
        out.accept.setdefault(key, []).append(accept)
    return out


def test_fit_rows_keeps_every_reading_below_the_bound_and_the_best_above():
    small = np.arange(40.0).reshape(20, 2)
    assert fit_rows(small).tolist() == list(range(20))
    values = np.random.default_rng(0).normal(size=(1000, 2))
    rows = fit_rows(values)
    assert len(rows) == MAX_FIT_READINGS and len(set(rows.tolist())) == MAX_FIT_READINGS
    assert rows.tolist() == fit_rows(values).tolist()  # deterministic
    for o in range(2):  # each objective's best readings are all kept
        assert set(np.argsort(-values[:, o])[:MAX_FIT_READINGS // 4].tolist()) <= set(rows.tolist())


def test_a_study_of_thousands_of_readings_is_fitted_to_a_bounded_sample():
    sampler = StructuredSampler(SPACE, seed=0)
    readings = _readings(sampler, 1200)
    measured = list(readings.values)
    # fitted as propose() fits them, BLAS on one thread: on the 2-core machine OpenBLAS's spinning
    # threads made these two fits cost ~8 CPU s, against ~1.5 s (the same fits, the same numbers)
    with one_blas_thread():
        beliefs = sampler.beliefs(readings, measured, 0.03 ** 2)
        for b in beliefs:
            for part in (b.a, b.b):  # log accept length and the objective's log relative step time
                assert part.gp.X_train_.shape[0] == MAX_FIT_READINGS, part.gp.X_train_.shape
        small = _readings(sampler, 60)
        for b in sampler.beliefs(small, list(small.values), 0.03 ** 2):
            assert b.b.gp.X_train_.shape[0] == 60  # every reading below the bound
    assert sampler.propose(readings, 1200) is not None
