"""The search-space file (``search_spaces/*.yaml``, or a shipped name: ``eagle3``) and the EAGLE-3
search space it describes.

:class:`SearchSpaceConfig` is the file as a typed, validated object (errors name the file and key,
see :mod:`tuner.config.yamlfile`). :class:`SearchSpace` answers three questions for the study
engine and the CLI: what SGLang really runs for a proposal (:meth:`SearchSpace.resolve`), which
distinct effective settings the space holds (:meth:`SearchSpace.effective_configs`), and the Optuna
distributions to sample from. The rules themselves live in :mod:`tuner.sglang.rules`.

Shipped spaces (:data:`SHIPPED_SPACES`, files in ``tuner/config/spaces``) are named as shipped suites
are (:func:`tuner.config.suite.load_suite`): a shipped name (``eagle3``, exactly) is the shipped file,
even where a file of that name lies in the folder paths are read from (write ``./eagle3`` for that
file); anything else is a path; a bare name that is neither shipped nor a file (no ``/``, no
``.yaml``) is refused as an unknown space, not reported as a missing file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag, ValidationInfo, field_validator, model_validator

from .. import shipped
from ..sglang.mamba import MambaCache
from ..sglang.rules import Resolution, ServerContext, SpecConfig, resolve, resolve_backend_aliases
from .paths import is_bare_name
from .yamlfile import ConfigError, StrictModel, did_you_mean, load_model, written_numbers

from .server_arg_checks import SPEC_PARAMS, check_server_args


class IntRange(StrictModel):
    """An integer range ``{low, high}`` (inclusive), optionally with ``step``."""

    low: int
    high: int
    step: int = Field(1, ge=1)

    @model_validator(mode="after")
    def _ordered(self):
        if self.low > self.high:
            raise ValueError(f"low ({self.low}) must not exceed high ({self.high})")
        return self

    def values(self) -> list[int]:
        return list(range(self.low, self.high + 1, self.step))

    def bounds(self) -> tuple[int, int]:
        """The smallest and the largest value, without listing them (a range may be huge)."""
        return self.low, self.low + (self.high - self.low) // self.step * self.step

    def count(self) -> int:
        return (self.high - self.low) // self.step + 1


class Choices(StrictModel):
    """A list of allowed integer values ``{choices: [...]}``."""

    choices: list[int] = Field(min_length=1)

    @field_validator("choices")
    @classmethod
    def _unique(cls, v):
        if len(set(v)) != len(v):
            raise ValueError("choices must not repeat a value")
        return v

    def values(self) -> list[int]:
        return list(self.choices)

    def bounds(self) -> tuple[int, int]:
        return min(self.choices), max(self.choices)

    def count(self) -> int:
        return len(self.choices)


def _param_kind(value: Any) -> str:
    # A mapping with `choices` is a list of values, anything else a range: errors then speak of
    # the form the author meant instead of listing both.
    # (Pydantic also calls this with the model itself when serializing.)
    if isinstance(value, Choices) or (isinstance(value, dict) and "choices" in value):
        return "choices"
    return "range"


Param = Annotated[
    Union[Annotated[IntRange, Tag("range")], Annotated[Choices, Tag("choices")]],
    Discriminator(_param_kind),
]

# The smallest value each flag may take: SGLang has no use for fewer than one draft step, a top-k of
# zero, or fewer than 2 draft tokens (the root plus at least one drafted token to verify).
_PARAM_MINIMUM = {"speculative_num_steps": 1, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 2}
#: The largest value each flag may take in a search space. SGLang states no maximum, but its own
#: grid (scripts/playground/bench_speculative.py) stops at 7 steps, topk 8 and 32 draft tokens, and
#: every value the tuner may propose is enumerated (SearchSpace.effective_configs): these caps are
#: far beyond anything worth launching and keep a typo (high: 1000000000) from exhausting memory.
PARAM_MAXIMUM = {"speculative_num_steps": 64, "speculative_eagle_topk": 64,
                 "speculative_num_draft_tokens": 1024}
#: Search spaces that ship with the package, by name (``tuner/config/spaces/NAME.yaml``); the first
#: is a study file's default ``search_space``. ``search_spaces/eagle3.yaml`` in the tuner's checkout
#: is the same file, kept identical by tests/config/test_shipped_space.py.
SPACES_DIR = shipped(__package__, "spaces")
SHIPPED_SPACES = ("eagle3",)
DEFAULT_SPACE = SHIPPED_SPACES[0]


def is_shipped_space(text: str | Path) -> bool:
    """Whether ``text`` names a shipped space (exactly its name: ``eagle3``, not ``eagle3.yaml``)."""
    return isinstance(text, str) and text in SHIPPED_SPACES


def unknown_space_problem(text: str) -> str:
    """What to say of a bare name (no ``/``, no ``.yaml``) that is neither shipped nor a file."""
    return (f"unknown search space {text!r}{did_you_mean(text, SHIPPED_SPACES)}; expected a shipped one "
            f"({', '.join(SHIPPED_SPACES)}) or a search-space YAML file")


def space_path(spec: str | Path, base_dir: str | Path | None = None) -> Path:
    """The file a search space's name or path refers to: a shipped name's file, else the path
    (relative ones against ``base_dir``, default the current folder). :class:`ConfigError` for a
    bare name that is neither shipped nor a file (see the module docstring); a missing path is left
    to the loader, which says "file not found"."""
    text = str(spec)
    if not text:  # Path("") is the current folder: "is a folder" would not say what was wrong
        raise ConfigError("<search space>", "", "empty; give a shipped space's name (eagle3) or a search-space "
                          "YAML file")
    if is_shipped_space(spec):
        return SPACES_DIR / f"{text}.yaml"
    path = Path(text)
    if not path.is_absolute() and base_dir is not None:
        path = Path(base_dir) / path
    from .files import check_usable

    check_usable(path)
    if is_bare_name(text) and not path.exists():
        raise ConfigError(text, "", unknown_space_problem(text))
    return path


#: The most requested combinations a space may hold (the shipped one has 2,016): every one is checked
#: against SGLang's rules when a study starts (about half a second for 100,000).
MAX_COMBINATIONS = 100_000


class SearchSpaceConfig(StrictModel):
    """A search-space file: ranges of the three EAGLE-3 flags and server args held fixed."""

    algorithm: Literal["EAGLE3", "EAGLE"] = "EAGLE3"
    params: dict[str, Param]
    #: other SGLang server arguments (underscore names) held constant in every trial
    #: (any YAML value: check_server_args checks each by its option's type, naming what it takes)
    fixed: dict[str, Any] = Field(default_factory=dict)

    @field_validator("params", mode="before")
    @classmethod
    def _a_list_is_choices(cls, v: Any):
        # a bare list of values (`speculative_eagle_topk: [1, 2, 4]`) is the choices form written short;
        # said with the form to write (QA: "input should be a valid dictionary", naming no fix)
        for name, value in (v.items() if isinstance(v, dict) else ()):
            if isinstance(value, list):
                raise ValueError(f"{name}: a list of values is written {{choices: {value}}} (or a range "
                                 "{low, high})")
        return v

    @field_validator("params")
    @classmethod
    def _three_params(cls, v: dict):
        for name in v:
            if name not in SPEC_PARAMS:
                raise ValueError(f"unknown parameter {name!r}; expected {', '.join(SPEC_PARAMS)}")
        for name in SPEC_PARAMS:
            if name not in v:
                raise ValueError(f"{name} is missing; give it a range {{low, high}} or {{choices: [...]}}")
            lowest, highest = v[name].bounds()
            if lowest < _PARAM_MINIMUM[name]:
                raise ValueError(f"{name}: values start at {lowest}; "
                                 f"the smallest SGLang can use is {_PARAM_MINIMUM[name]}")
            if highest > PARAM_MAXIMUM[name]:
                raise ValueError(f"{name}: values go up to {highest}; the tuner's cap is "
                                 f"{PARAM_MAXIMUM[name]} (far beyond any setting SGLang's own grid tries)")
        combinations = 1
        for name in SPEC_PARAMS:
            combinations *= v[name].count()
        if combinations > MAX_COMBINATIONS:
            raise ValueError(f"{combinations:,} combinations of the three flags; the cap is "
                             f"{MAX_COMBINATIONS:,}: narrow a range or give a step")
        return v

    @field_validator("fixed")
    @classmethod
    def _no_spec_in_fixed(cls, v: dict, info: ValidationInfo):
        return check_server_args(v, "fixed", written_numbers(info.context, "fixed."), stored=info.context is None)

    @model_validator(mode="after")
    def _something_runs(self):
        # A space SGLang can run nothing of would still create a study and measure its baseline,
        # then have no trial to propose. Judged on the ranges alone: the rules the other server
        # arguments bring (attention backend, page size) depend on the study's server.args and the
        # backend the study pins at creation, which this file does not know (tuner.engine.facts).
        # Stops at the first valid setting: cheap for a good space.
        ctx = ServerContext(speculative_algorithm=self.algorithm)
        first: Resolution | None = None
        total = 0
        for cfg in _requested(self):
            res = resolve(cfg, ctx)
            if res.ok:
                return self
            first, total = first or res, total + 1
        rule = first.violation.rule
        raise ValueError(f"the ranges in params hold no setting SGLang can run: all {total:,} combinations break "
                         f"its rules, e.g. {rule} ({first.requested.label()}: {first.violation.message}); "
                         f"{_WIDEN.get(rule, 'widen the ranges')}")

    def values(self, name: str) -> list[int]:
        return self.params[name].values()


#: What to change in the file when every setting of a space breaks one rule (the rule's own
#: message says what is wrong with one setting).
_WIDEN = {
    "tree-too-large": "lower speculative_num_draft_tokens' low, or raise speculative_num_steps or "
                      "speculative_eagle_topk (a tree drafts at most topk + (steps - 1) * topk^2 tokens)",
}


def _requested(config: SearchSpaceConfig):
    """Every requested combination of the file's ranges, as SpecConfig."""
    for steps in config.values("speculative_num_steps"):
        for topk in config.values("speculative_eagle_topk"):
            for draft in config.values("speculative_num_draft_tokens"):
                yield SpecConfig(steps, topk, draft)


def load_space(path: str | Path) -> SearchSpaceConfig:
    """Load and validate a search space: a shipped name or a file (:func:`space_path`, relative to
    the current folder); raises :class:`ConfigError`."""
    return load_model(SearchSpaceConfig, space_path(path))



def context_from_args(algorithm: str | None, server_args: dict, target_attention: str | None = None,
                      draft_attention: str | None = None, target_architecture: str | None = None) -> ServerContext:
    """The :class:`ServerContext` the rules need, read from server arguments (underscore names) and
    the model facts (``"mla"``/``"mha"``; None: not known, the MLA rules stay out). Deprecated
    backend names are read as SGLang renames them (:func:`resolve_backend_aliases`)."""
    server_args = resolve_backend_aliases(server_args, algorithm is not None)
    return ServerContext(
        speculative_algorithm=algorithm,
        attention_backend=server_args.get("attention_backend"),
        page_size=int(server_args.get("page_size") or 1),
        # speculative_hook.py: block verification turns rejection sampling on (EAGLE, EAGLE3)
        use_rejection_sampling=bool(server_args.get("speculative_use_rejection_sampling")
                                    or server_args.get("speculative_use_block_verification")),
        accept_thresholds=tuple(1.0 if server_args.get(k) is None else float(server_args[k])
                                for k in ("speculative_accept_threshold_single", "speculative_accept_threshold_acc")),
        decode_attention_backend=server_args.get("decode_attention_backend"),
        prefill_attention_backend=server_args.get("prefill_attention_backend"),
        draft_attention_backend=server_args.get("speculative_draft_attention_backend"),
        target_attention=target_attention,
        draft_attention=draft_attention,
        target_architecture=target_architecture,
        speculative_attention_mode=server_args.get("speculative_attention_mode") or "prefill",
        kv_cache_dtype=None if server_args.get("kv_cache_dtype") is None else str(server_args["kv_cache_dtype"]),
        # a hybrid (mamba) model's radix-cache arguments, as given (tuner.sglang.mamba): a study of LFM2
        # with page_size 16 passed create and failed every launch, its baseline first (QA, qa141)
        mamba_cache=MambaCache.from_args(server_args),
    )


@dataclass(frozen=True)
class SearchSpace:
    """A validated search space plus the server arguments the rules depend on.

    ``rules_context`` is the full context a study's launches run with (the space's fixed args, the
    study's ``server.args``, the launcher's pins and the model facts: :mod:`tuner.engine.facts`);
    without it, the space's fixed args alone. ``attention`` is the study's attention decision.
    """

    config: SearchSpaceConfig
    source: str = "<search space>"
    rules_context: ServerContext | None = None
    attention: Any = None  #: a tuner.sglang.attention.AttentionChoice, or None

    @classmethod
    def load(cls, path: str | Path) -> "SearchSpace":
        return cls(load_space(path), str(path))

    @property
    def context(self) -> ServerContext:
        if self.rules_context is not None:
            return self.rules_context
        return context_from_args(self.config.algorithm, self.config.fixed)

    def with_context(self, ctx: ServerContext, attention: Any = None) -> "SearchSpace":
        return replace(self, rules_context=ctx, attention=attention)

    def without_trees(self) -> "SearchSpace":
        """The same space with topk held at 1 (for a backend that runs chains only)."""
        params = {**self.config.params, "speculative_eagle_topk": Choices(choices=[1])}
        return replace(self, config=self.config.model_copy(update={"params": params}))

    def values(self, name: str) -> list[int]:
        return self.config.values(name)

    def resolve(self, requested: SpecConfig) -> Resolution:
        return resolve(requested, self.context)

    def contains(self, cfg: SpecConfig) -> bool:
        """Whether ``cfg`` lies within the file's ranges (as requested, before rewrites)."""
        return all(
            value in self.values(name)
            for name, value in zip(SPEC_PARAMS, (cfg.num_steps, cfg.eagle_topk, cfg.num_draft_tokens))
        )

    def proposals(self):
        """Every requested setting in the ranges, with its resolution (the full Cartesian product)."""
        for cfg in _requested(self.config):
            yield cfg, self.resolve(cfg)

    def effective_configs(self) -> list[SpecConfig]:
        """The distinct settings SGLang would really run, valid ones only, sorted (a new list each
        call, of settings resolved once per space: a run, its preflight and its sampler ask it again
        and again, and the space is frozen)."""
        return list(self._effective)

    @cached_property
    def _effective(self) -> tuple[SpecConfig, ...]:
        return tuple(sorted({res.effective for _, res in self.proposals() if res.ok}))

    def distributions(self) -> dict:
        """Optuna distributions for the three flags (integers, or categorical for choices)."""
        import optuna.distributions as d

        out = {}
        for name in SPEC_PARAMS:
            p = self.config.params[name]
            if isinstance(p, IntRange):
                out[name] = d.IntDistribution(p.low, p.high, step=p.step)
            else:
                out[name] = d.CategoricalDistribution(list(p.choices))
        return out
