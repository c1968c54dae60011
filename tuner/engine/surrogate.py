"""The structured sampler's surrogate: Gaussian processes over the enumerable settings.

Inputs are four features of the tree SGLang verifies (:func:`features`); outputs are logs (of an
accept length, a relative step time or a speedup), so a distance is a relative difference and the
measurement noise is one number for every setting. scikit-learn's ``GaussianProcessRegressor``
holds a constant times a Matern-5/2 kernel with one length scale per feature, plus white noise no
smaller than the measured noise (:func:`fit` chooses the hyperparameters); readings of a setting
measured more than once are separate rows, so the model averages them with the right weight.
:class:`Belief` is the posterior at every candidate; :class:`Difference` combines two (a log
speedup is log accept length minus log relative step time).

Pure computation: nothing here reads or writes a study. Deterministic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..sglang.rules import SpecConfig
from ..sglang.trees import tree_key


def features(specs: Sequence[SpecConfig], max_steps: int, max_topk: int, max_draft: int) -> np.ndarray:
    """Settings as points in [0, 1]^4, by what SGLang verifies (:func:`tree_key`): log2 of the depth
    cap, of the width cap, of the draft tokens, and of the verified slots a full tree of that depth
    and width could fill (``min(draft - 1, depth x width)``). Chosen on the training landscapes
    (README, "How the tuner searches"): these predict accept length and speedup better than the raw
    flags."""
    top_d = max(1.0, math.log2(max_draft))
    out = np.empty((len(specs), 4))
    for i, spec in enumerate(specs):
        depth, width, draft = tree_key(spec)
        out[i] = (math.log2(depth) / max(1.0, math.log2(max_steps)), math.log2(width) / max(1.0, math.log2(max_topk)),
                  math.log2(draft) / top_d, math.log2(min(draft - 1, depth * width)) / top_d)
    return out


#: The log-normal prior on every length scale (features in [0, 1]): centred on half the range, with
#: a precision of 0.3 per squared e-fold -- weak: a dozen readings cannot tell a rough landscape from
#: noise on their own, yet a firmer prior made the model too sure of itself between readings
#: (chosen on the training landscapes).
LENGTH_PRIOR_CENTRE, LENGTH_PRIOR_WEIGHT = 0.5, 0.3


@dataclass
class Belief:
    """The fitted model's belief about the log objective at every candidate (the latent value, not a
    reading): posterior means, standard deviations, and covariances on demand."""

    mean: np.ndarray
    sd: np.ndarray
    gp: object = field(repr=False)  #: the fitted GaussianProcessRegressor
    candidates: np.ndarray = field(repr=False)

    def cov(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Posterior covariance of the latent values at candidates ``a`` and ``b`` (index arrays)."""
        from scipy.linalg import solve_triangular

        kernel = self.gp.kernel_.k1  # the signal part; the white noise belongs to readings only
        xa, xb = self.candidates[a], self.candidates[b]
        va = solve_triangular(self.gp.L_, self.gp.kernel_(self.gp.X_train_, xa), lower=True, check_finite=False)
        vb = solve_triangular(self.gp.L_, self.gp.kernel_(self.gp.X_train_, xb), lower=True, check_finite=False)
        return kernel(xa, xb) - va.T @ vb


def one_blas_thread():
    """A context in which BLAS (OpenBLAS, MKL) computes on one thread, for the surrogate's work: its
    matrices are a few dozen rows, and OpenBLAS's worker threads spin while they wait for work. On
    the 2-core machine one :func:`fit` of 12 readings took 66 ms of CPU with them and 8 ms without,
    the same numbers to the last bit; a study's worker shares its node with the server it measures
    (``benchmarks/search_efficiency.py`` always ran on one thread). threadpoolctl (scikit-learn's own
    dependency) sets the limit of the libraries loaded and puts it back on exit, so scipy's own
    OpenBLAS, which :func:`fit` uses, is loaded first: one loaded inside the block kept its threads,
    and a process's first proposal ran with them. scikit-learn brings no BLAS of its own (OpenMP
    only), and is left to the first :func:`fit`: a proposal that fits nothing does not import it."""
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=1, user_api="blas")


#: The most readings a Gaussian process is fitted to. Its fit is cubic in them and its gradient holds
#: readings^2 x features floats: on a study of 2,000 launches the first proposal took 4m56s, and on
#: 10,000 none came in 22 minutes at 5.2 GB (QA, qa186). A night's 16-100 launches never reach it.
MAX_FIT_READINGS = 300


def fit_rows(values: np.ndarray, cap: int = MAX_FIT_READINGS) -> np.ndarray:
    """The indices of the readings (rows of ``values``: one column per objective, higher better) a
    model is fitted to: every one up to ``cap``; past it, the best ``cap / (2 x objectives)`` of each
    objective (where the search and the picks are) and readings evenly spread over the rest, in
    their order, ``cap`` in all. Deterministic: the same readings give the same rows."""
    values = np.asarray(values, dtype=float).reshape(len(values), -1)
    n = len(values)
    if n <= cap:
        return np.arange(n)
    per = max(1, cap // (2 * values.shape[1]))
    best: set[int] = set()
    for o in range(values.shape[1]):
        best.update(int(i) for i in np.argsort(-values[:, o], kind="stable")[:per])
    rest = [i for i in range(n) if i not in best]
    fill = max(0, cap - len(best))
    spread = {rest[int(j)] for j in np.linspace(0, len(rest) - 1, fill)} if fill and rest else set()
    return np.array(sorted(best | spread))


def fit(x: np.ndarray, y: np.ndarray, candidates: np.ndarray, noise_var: float) -> Belief:
    """Fit a GP to readings ``y`` (log values) at ``x``; its belief at every row of ``candidates``.

    Hyperparameters maximize the log marginal likelihood plus a weak log-normal prior on each
    length scale (:data:`LENGTH_PRIOR_WEIGHT`), with scipy's L-BFGS-B inside the bounds, from one
    fixed start: deterministic, and without the warnings scikit-learn's own optimizer raises at a
    bound (warnings filters are process-wide, so silencing them is unsafe with several threads).
    """
    from scipy.optimize import minimize
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

    noise_var = max(noise_var, 1e-6)
    kernel = (ConstantKernel(0.05, (1e-4, 10.0)) * Matern(length_scale=[0.5] * x.shape[1],
                                                          length_scale_bounds=(0.08, 10.0), nu=2.5)
              + WhiteKernel(noise_var, (noise_var, max(noise_var * 4, 0.01))))
    offset = float(np.mean(y))
    gp = GaussianProcessRegressor(kernel=kernel, optimizer=None).fit(x, y - offset)
    lengths = slice(1, 1 + x.shape[1])  # theta: log constant, log length scales, log noise
    centre = math.log(LENGTH_PRIOR_CENTRE)

    def objective(theta):
        lml, grad = gp.log_marginal_likelihood(theta, eval_gradient=True, clone_kernel=False)
        d = theta[lengths] - centre
        grad = -grad
        grad[lengths] += LENGTH_PRIOR_WEIGHT * d
        return -lml + LENGTH_PRIOR_WEIGHT * 0.5 * float(d @ d), grad

    best = minimize(objective, kernel.theta, jac=True, method="L-BFGS-B", bounds=kernel.bounds)
    gp = GaussianProcessRegressor(kernel=kernel.clone_with_theta(best.x), optimizer=None).fit(x, y - offset)
    mean, sd = gp.predict(candidates, return_std=True)
    latent_sd = np.sqrt(np.maximum(sd ** 2 - gp.kernel_.k2.noise_level, 1e-12))
    return Belief(mean + offset, latent_sd, gp, candidates)


@dataclass
class Difference:
    """The belief about ``a - b`` for independent beliefs ``a`` and ``b`` (log accept length minus
    log relative step time: a log speedup)."""

    a: Belief
    b: Belief

    @property
    def mean(self) -> np.ndarray:
        return self.a.mean - self.b.mean

    @property
    def sd(self) -> np.ndarray:
        return np.sqrt(self.a.sd ** 2 + self.b.sd ** 2)

    def cov(self, i: np.ndarray, j: np.ndarray) -> np.ndarray:
        return self.a.cov(i, j) + self.b.cov(i, j)


def expected_improvement(mean: np.ndarray, sd: np.ndarray, best: float) -> np.ndarray:
    """E[max(0, f - best)] for f ~ N(mean, sd^2), elementwise."""
    from scipy.stats import norm

    sd = np.maximum(sd, 1e-9)
    z = (mean - best) / sd
    return (mean - best) * norm.cdf(z) + sd * norm.pdf(z)
