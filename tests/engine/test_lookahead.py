"""The value of a move (tuner/engine/lookahead.py): a one-step look-ahead of export's rule (the best
mean reading) under a belief, plus the expected improvement of a new setting while launches remain."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pytest

from tuner.engine.lookahead import move_values


@dataclass
class Independent:
    """A belief with independent candidates (the surrogate's beliefs are correlated; the rule is not)."""

    mean: np.ndarray
    sd: np.ndarray

    def cov(self, a, b):
        return np.where(np.asarray(a)[:, None] == np.asarray(b)[None, :], self.sd[a][:, None] ** 2, 0.0)


def values(belief, measured, means, counts, moves, weight=0.0, noise=0.03):
    return move_values([belief], np.array(measured), np.array(means)[:, None], np.array(counts),
                       np.array(moves), noise ** 2, weight)


def test_measuring_a_lucky_pick_again_is_worth_its_expected_fall():
    # candidate 0 reads best (log 0.05 above candidate 1) on one reading, but the belief says it is
    # 5% worse than candidate 1: a second reading will likely hand the pick to 1, a gain of ~5%
    belief = Independent(np.array([0.0, 0.05, -0.5]), np.array([0.02, 0.01, 0.3]))
    again_lucky, again_rival = values(belief, [0, 1], [0.10, 0.05], [1, 3], [0, 1])
    assert again_lucky > 0.01 and again_lucky > again_rival


def test_a_pick_the_belief_agrees_with_gains_nothing_from_a_repeat():
    belief = Independent(np.array([0.2, 0.0, 0.0]), np.array([0.01, 0.01, 0.01]))
    [again] = values(belief, [0, 1], [0.2, 0.0], [2, 2], [0])
    assert again == pytest.approx(0.0, abs=1e-4)


def test_exploring_counts_improvement_only_while_launches_remain():
    belief = Independent(np.array([0.0, 0.1, -0.05]), np.array([0.01, 0.08, 0.08]))
    near_the_end = values(belief, [0], [0.0], [1], [1, 2], weight=0.0)
    with_time = values(belief, [0], [0.0], [1], [1, 2], weight=1.0)
    assert (with_time > near_the_end).all()
    assert near_the_end[0] > near_the_end[1] > -1e-9  # a likely better setting still beats a worse one
