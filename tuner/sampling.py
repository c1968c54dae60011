"""Samplers: Optuna's own, configured for a small budget (~16 trials) in a ~1,000-config space.

The default (``auto``) was chosen by measurement: see ``benchmarks/search_efficiency.py`` and the
README's table. Every sampler gets the worker's own seed (a shared seed makes a restarted worker
propose the crashed trial's parameters again). Failed and invalid trials carry a violated constraint
(Optuna 5's ``trial.set_constraint``), which TPE, NSGA-II and GP use to steer away from them.
"""

from __future__ import annotations

from .config import SamplerSettings
from .rules import AUTO_CHOICE, SpecConfig
from .yamlfile import ConfigError

#: Measured first in every study (when in the space): SGLang's automatic choice, then the article's
#: setting (num_steps=1, topk=1, draft tokens=3, which SGLang runs with 2 draft tokens).
DEFAULT_SEED_TRIALS = (SpecConfig(*AUTO_CHOICE), SpecConfig(1, 1, 3))


def make_sampler(settings: SamplerSettings, seed: int, grid: dict[str, list[int]]):
    """``grid``: the space's values per flag, the default grid of the grid sampler."""
    import optuna.samplers as s

    opts = dict(settings.options)
    name = settings.name
    try:
        if name in ("auto", "tpe"):
            defaults = {"multivariate": True, "n_startup_trials": 6, "constant_liar": True}
            return s.TPESampler(seed=seed, **{**defaults, **opts})
        if name == "nsgaii":
            return s.NSGAIISampler(seed=seed, **opts)
        if name == "random":
            return s.RandomSampler(seed=seed, **opts)
        if name == "gp":
            try:
                import torch  # noqa: F401  - GPSampler's requirement, not one of ours
            except ImportError:
                raise ConfigError("study file", "sampler.name", "gp needs torch, which tuner does not "
                                  "install; `pip install torch` or use tpe") from None
            return s.GPSampler(seed=seed, **opts)
        if name == "grid":
            return s.GridSampler(opts.pop("search_space", grid), seed=seed, **opts)
    except TypeError as exc:
        raise ConfigError("study file", "sampler.options", f"not accepted by the {name} sampler: {exc}") from None
    raise ConfigError("study file", "sampler.name", f"unknown sampler {name!r}")

