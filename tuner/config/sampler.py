"""``sampler.options`` of a study file: the keyword arguments each sampler accepts, typed.

Checked when the study file loads (:func:`check_sampler_options`), so an unknown option, a wrong
type or an impossible value stops ``study create`` and ``run`` before the study is written, instead
of failing at the first trial. The names and meanings are Optuna 5's (``optuna/samplers/_tpe/
sampler.py``, ``nsgaii/_sampler.py``, ``_gp/sampler.py``, ``_grid.py``) and the tuner's own
samplers' (``auto``: :mod:`tuner.engine.structured`; ``local-tpe``: :mod:`tuner.engine.sampling`).
Only options a YAML file can give are listed: the ones that take Python callables or objects
(``gamma``, ``constraints_func``, ``mutation``, ...) are not.
``seed`` is ``sampler.seed``, never an option (each worker derives its own from it).
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, ValidationError

from .space import MAX_COMBINATIONS, PARAM_MAXIMUM, SPEC_PARAMS
from .yamlfile import StrictModel, validation_error

#: The most launches an option counted in launches may give (``n_startup_trials``, the auto sampler's
#: ``horizon``, ``confirm``, ``noise_weight`` in readings, NSGA-II's ``population_size``): a study's
#: budget holds at most as many (``tuner.config.study.MAX_TRIALS``, which is :data:`MAX_COMBINATIONS`),
#: so a larger one is a typo that silently turns the sampler into something else (QA: tpe's
#: ``n_startup_trials`` and auto's ``horizon`` of 10**30 were taken: random search for ever, and
#: exploration weighed to nothing). Options counting candidate settings (``n_ei_candidates``,
#: ``shortlist``, ``centres``) are held to the same: no space holds more settings.
MAX_LAUNCHES = MAX_COMBINATIONS
#: The most lattice steps ``local_radius`` may give: the largest range a space may hold
#: (:data:`tuner.config.space.PARAM_MAXIMUM`), past which every setting is within the radius.
MAX_RADIUS = max(PARAM_MAXIMUM.values())
#: The most ``local_doubt`` may give: it is a relative spread of a speedup's log (0.06 is 6%), and
#: 1 (a factor of e either way) already doubts every believed value near a pick entirely; a larger
#: one is a typo (QA: 1e200 was taken, and every proposal printed numpy's "overflow encountered").
MAX_LOCAL_DOUBT = 1.0
#: The most ``hedge`` (GP-Hedge's eta) may give: it multiplies a gain in log speedups, so at 1000 a
#: rule ahead by 0.01 (1%) is already e^10 times likelier; a larger one is a typo.
MAX_HEDGE = 1000.0


class TPEOptions(StrictModel):
    """``optuna.samplers.TPESampler``'s plain-data options."""

    consider_prior: bool | None = None
    prior_weight: float | None = Field(None, gt=0)
    consider_magic_clip: bool | None = None
    consider_endpoints: bool | None = None
    n_startup_trials: int | None = Field(None, ge=0, le=MAX_LAUNCHES)
    n_ei_candidates: int | None = Field(None, ge=1, le=MAX_LAUNCHES)
    multivariate: bool | None = None
    group: bool | None = None
    warn_independent_sampling: bool | None = None
    constant_liar: bool | None = None


class LocalTPEOptions(TPEOptions):
    """``local-tpe`` (the previous default): its local moves, and TPE's options for its TPE part."""

    local_prob: float | None = Field(None, ge=0, le=1)
    draft_factor: float | None = Field(None, gt=1)
    center_tolerance: float | None = Field(None, ge=0, lt=1)


class AutoOptions(StrictModel):
    """The default ``auto`` sampler (:class:`tuner.engine.structured.StructuredSampler`); the
    defaults, chosen on the training landscapes, are its ``STRUCTURED_OPTIONS``."""

    #: relative noise of a speedup assumed before the study has repeated readings
    noise: float | None = Field(None, gt=0, lt=1)
    #: how many readings that assumption is worth
    noise_weight: float | None = Field(None, ge=0, le=MAX_LAUNCHES)
    explore_weight: float | None = Field(None, ge=0)
    horizon: float | None = Field(None, gt=0, le=MAX_LAUNCHES)
    shortlist: int | None = Field(None, ge=1, le=MAX_LAUNCHES)
    global_weight: float | None = Field(None, ge=0, le=1)
    centres: int | None = Field(None, ge=1, le=MAX_LAUNCHES)
    #: lattice steps around each objective's best: steps, topk, draft-token rungs
    local_radius: list[Annotated[int, Field(ge=0, le=MAX_RADIUS)]] | None = Field(None, min_length=3, max_length=3)
    confirm: int | None = Field(None, ge=0, le=MAX_LAUNCHES)
    local_doubt: float | None = Field(None, ge=0, le=MAX_LOCAL_DOUBT)
    #: in the last ``confirm`` launches, measure again an export pick the model disputes or the
    #: setting it believes better, whichever the look-ahead values more (False: a pick resting on
    #: one reading close to a rival's, the rule before)
    dispute: bool | None = None
    #: GP-Hedge's eta: after the seeds, three rules (this value, the expected improvement alone, the
    #: look-ahead alone) each nominate a move and one is drawn by its realised gains; 0: off
    hedge: float | None = Field(None, ge=0, le=MAX_HEDGE)


class NSGAIIOptions(StrictModel):
    population_size: int | None = Field(None, ge=2, le=MAX_LAUNCHES)
    mutation_prob: float | None = Field(None, ge=0, le=1)
    crossover_prob: float | None = Field(None, ge=0, le=1)
    swapping_prob: float | None = Field(None, ge=0, le=1)


class GPOptions(StrictModel):
    n_startup_trials: int | None = Field(None, ge=0, le=MAX_LAUNCHES)
    deterministic_objective: bool | None = None
    warn_independent_sampling: bool | None = None


class GridOptions(StrictModel):
    #: values per flag (default: every value of the search space)
    search_space: dict[str, list[int]] | None = None


class RandomOptions(StrictModel):
    pass


SAMPLER_OPTIONS: dict[str, type[StrictModel]] = {
    "auto": AutoOptions, "local-tpe": LocalTPEOptions, "tpe": TPEOptions, "nsgaii": NSGAIIOptions, "gp": GPOptions,
    "grid": GridOptions, "random": RandomOptions,
}


def check_sampler_options(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """``options`` unchanged when the ``name`` sampler accepts them; else ``ValueError`` naming the
    option (``n_startup_trials: input should be a valid integer, got 'ten'``)."""
    if "seed" in options:
        raise ValueError("seed: set sampler.seed instead (each worker derives its own seed from it)")
    model = SAMPLER_OPTIONS[name]
    try:
        parsed = model.model_validate(options)
    except ValidationError as exc:
        err = validation_error("", exc, model)
        raise ValueError(f"{err.key}: {err.message} (for the {name} sampler)") from None
    grid = getattr(parsed, "search_space", None)
    if grid is not None:
        unknown = sorted(set(grid) - set(SPEC_PARAMS))
        if unknown or not all(grid.get(p) for p in SPEC_PARAMS):
            extra = f" (unknown: {', '.join(unknown)})" if unknown else ""
            raise ValueError(f"search_space: give a non-empty list of values for each of "
                             f"{', '.join(SPEC_PARAMS)}{extra}")
    return options
