"""What one more launch is worth: the structured sampler's look-ahead over explore and re-measure moves.

The value of a move is what it adds, in expectation, to the TRUE value of what ``tuner study export``
would pick afterwards, judged by the surrogate's belief (:class:`tuner.engine.surrogate.Belief`,
log objective values, so a value of 0.01 is about 1%):

* the export picks the setting with the best *mean reading* (:func:`tuner.engine.records.merge_repeats`);
* a move measures one setting once more (re-measure) or for the first time (explore); its reading
  is drawn from the belief (latent value plus the measurement noise), at Gauss-Hermite nodes;
* the reading updates the belief about every measured setting (Gaussian conditioning) and the
  readings' means, hence the export's pick; the move's value is the expected belief about the new
  pick minus the belief about the current one (a one-step knowledge gradient for export's rule).

A first reading rarely displaces a pick at once, although a setting found better will be confirmed
later: while launches remain, an explore move also earns ``explore_weight`` times its expected
improvement over the best believed measured value. Moves are summed over the objectives: a reading
informs every objective at once.
"""

from __future__ import annotations

import numpy as np

from .surrogate import Belief, expected_improvement

_NODES, _WEIGHTS = np.polynomial.hermite_e.hermegauss(16)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


def move_values(beliefs: list[Belief], measured: np.ndarray, means: np.ndarray, counts: np.ndarray,
                moves: np.ndarray, noise_var: float, explore_weight: float, trust: np.ndarray | None = None,
                doubt: np.ndarray | None = None) -> np.ndarray:
    """The value of each move (candidate indices ``moves``; a move at a ``measured`` index is a
    re-measurement). ``means``: mean log reading per measured setting and objective; ``counts``: its
    readings; ``trust``: a factor per move on its expected-improvement term (how far the surrogate
    is trusted there); ``doubt``: a floor per move under the surrogate's standard deviation in that
    term (what a smooth model may miss near the best settings: a step in one flag the readings do
    not show yet)."""
    trust = np.ones(len(moves)) if trust is None else trust
    doubt = np.zeros(len(moves)) if doubt is None else doubt
    total = np.zeros(len(moves))
    slot = {int(c): j for j, c in enumerate(measured)}
    again = np.array([slot.get(int(c), -1) for c in moves])
    for o, belief in enumerate(beliefs):
        total += _knowledge_gradient(belief, measured, means[:, o], counts, moves, again, noise_var)
        if explore_weight > 0:
            fresh = again < 0
            best = float(belief.mean[measured].max())
            sd = np.sqrt(belief.sd[moves[fresh]] ** 2 + doubt[fresh] ** 2)
            total[fresh] += explore_weight * trust[fresh] * expected_improvement(belief.mean[moves[fresh]], sd, best)
    return total


def _knowledge_gradient(belief: Belief, measured, means, counts, moves, again, noise_var) -> np.ndarray:
    mu_m = belief.mean[measured]
    mu_a, var_a = belief.mean[moves], belief.sd[moves] ** 2
    s = np.sqrt(var_a + noise_var)  # sd of one reading
    cov_ma = belief.cov(measured, moves)  # (M, A)
    z = _NODES[None, :]  # (1, Q)
    # belief after a reading y = mu_a + s z: measured means shift by cov / s * z
    mu_m_new = mu_m[None, None, :] + (cov_ma.T / s[:, None])[:, None, :] * z[:, :, None]  # (A, Q, M)
    mu_a_new = mu_a[:, None] + (var_a / s)[:, None] * z  # (A, Q)
    y = mu_a[:, None] + s[:, None] * z  # (A, Q)
    # the readings' means after the move
    r = np.broadcast_to(means, mu_m_new.shape).copy()
    for a, j in enumerate(again):
        if j >= 0:
            r[a, :, j] = (counts[j] * means[j] + y[a]) / (counts[j] + 1)
    best_old = r.max(axis=2)  # (A, Q): best mean reading among the measured
    pick = r.argmax(axis=2)
    value_old = np.take_along_axis(mu_m_new, pick[:, :, None], axis=2)[:, :, 0]
    fresh = (again < 0)[:, None]
    value = np.where(fresh & (y > best_old), mu_a_new, value_old)
    current = mu_m[int(np.argmax(means))]
    return value @ _WEIGHTS - current


def improvement_values(beliefs: list[Belief], measured: np.ndarray, moves: np.ndarray,
                       doubt: np.ndarray | None = None) -> np.ndarray:
    """GP-Hedge's second rule (``hedge``): each move's expected improvement over the best believed
    measured value, summed over the objectives, with ``doubt`` floored under the standard deviation
    as in :func:`move_values` and in full trust everywhere; a re-measurement (a move at a
    ``measured`` index) nominates nothing (-inf)."""
    doubt = np.zeros(len(moves)) if doubt is None else doubt
    fresh = ~np.isin(moves, measured)
    total = np.full(len(moves), -np.inf)
    total[fresh] = 0.0
    for belief in beliefs:
        best = float(belief.mean[measured].max())
        sd = np.sqrt(belief.sd[moves[fresh]] ** 2 + doubt[fresh] ** 2)
        total[fresh] += expected_improvement(belief.mean[moves[fresh]], sd, best)
    return total


def hedge_odds(gains: np.ndarray, eta: float) -> np.ndarray:
    """GP-Hedge's odds (Hoffman, Brochu and de Freitas, 2011, "Portfolio allocation for Bayesian
    optimization"): rule ``r`` is drawn with probability proportional to ``exp(eta x gains[r])``, a
    rule's gain the model's current belief at the settings it nominated before (log values: with
    eta 10, a rule whose nominees the model places 0.1 higher is e times likelier). Shifted by the
    largest gain, so no gain overflows."""
    z = eta * (np.asarray(gains, dtype=float) - float(np.max(gains)))
    odds = np.exp(z)
    return odds / odds.sum()
