"""The search-space file (``search_spaces/*.yaml``) and the EAGLE-3 search space it describes.

:class:`SearchSpaceConfig` is the file as a typed, validated object (errors name the file and key,
see :mod:`tuner.config.yamlfile`). :class:`SearchSpace` answers three questions for the study
engine and the CLI: what SGLang really runs for a proposal (:meth:`SearchSpace.resolve`), which
distinct effective settings the space holds (:meth:`SearchSpace.effective_configs`), and the Optuna
distributions to sample from. The rules themselves live in :mod:`tuner.sglang.rules`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from ..sglang.rules import Resolution, ServerContext, SpecConfig, flag_name, resolve, resolve_backend_aliases
from .yamlfile import StrictModel, did_you_mean, load_model

SPEC_PARAMS = ("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens")


#: Server arguments the tuner sets itself on every launch, from the study's own keys (the model, the
#: parallelism, where it listens, the speculative flags the search owns, the simulator's clock). Set in
#: ``server.args``, a space's ``fixed`` or ``server.extra_args`` they would be given twice, and the
#: last one would win: the server would run something else than the study records.
RESERVED_SERVER_ARGS = ("model_path", "tp_size", "host", "port", "speculative_algorithm",
                        "speculative_draft_model_path", *SPEC_PARAMS, "config",
                        "sim_profile", "sim_speedup", "sim_load_seconds", "sim_noise", "sim_seed")


def reserved_arg(name: str) -> str | None:
    """The reserved argument ``name`` (underscore form) would set, or None. An alias or a unique
    prefix counts, as SGLang's argparse takes it (``model`` is ``--model-path``, ``tp`` is
    ``--tp-size``: ``tuner.sglang.server_args``, SGLang 0.5.23's own parser table)."""
    from ..sglang.server_args import server_args_table

    if name in RESERVED_SERVER_ARGS:
        return name
    option = server_args_table().option_for_flag(flag_name(name))
    return option.dest if option is not None and option.dest in RESERVED_SERVER_ARGS else None


def check_server_args(args: dict, where: str) -> dict:
    """Server arguments (``server.args``, a space's ``fixed``) are SGLang's underscore names, never
    the flags the tuner itself sets, and each one SGLang 0.5.23 has, with a value of its type
    (:func:`_check_server_arg`). ``ValueError`` naming the first that is not; otherwise ``args``
    under SGLang's own names: an alias or an abbreviation SGLang's parser takes (``attention_back``)
    becomes the name it stands for (``attention_backend``), so the rules, the launcher's pins and the
    conflict checks, which read names, see it.

    A typo here would otherwise surface on the GPU node only, as every launch of the night failing
    with argparse's "unrecognized arguments"."""
    for name in args:
        if "-" in name:
            raise ValueError(f"{name!r}: write server arguments with underscores ({name.replace('-', '_')})")
        owner = reserved_arg(name)
        if owner is not None:
            alias = "" if owner == name else f" (SGLang reads it as {owner})"
            raise ValueError(f"{name!r}{alias} is searched or set by the tuner from the study's own keys; "
                             f"remove it from {where}")
    out: dict = {}
    given: dict[str, str] = {}  #: SGLang's name -> the name the file used
    for name, value in args.items():
        dest = _check_server_arg(name, value)
        if dest in given:
            raise ValueError(f"{name} and {given[dest]} are both SGLang's {dest}; give it once")
        given[dest], out[dest] = name, value
    return out


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
#: The most requested combinations a space may hold (the shipped one has 2,016): every one is checked
#: against SGLang's rules when a study starts (about half a second for 100,000).
MAX_COMBINATIONS = 100_000


class SearchSpaceConfig(StrictModel):
    """``search_spaces/*.yaml``: ranges of the three EAGLE-3 flags and server args held fixed."""

    algorithm: Literal["EAGLE3", "EAGLE"] = "EAGLE3"
    params: dict[str, Param]
    #: other SGLang server arguments (underscore names) held constant in every trial
    #: (any YAML value: check_server_args checks each by its option's type, naming what it takes)
    fixed: dict[str, Any] = Field(default_factory=dict)

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
    def _no_spec_in_fixed(cls, v: dict):
        return check_server_args(v, "fixed")

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


def _check_server_arg(name: str, value: Any) -> str:
    """A server argument SGLang 0.5.23 has (``tuner.sglang.server_args``, its own parser table), with
    a value of its type (an integer flag an integer, a switch true or false, one of its choices);
    ``page_size`` at least 1: its name in SGLang's table (``dest``). ``ValueError`` naming the
    argument otherwise."""
    from ..sglang.server_args import server_args_table

    table = server_args_table()
    option = table.option_named(name)
    if option is None:
        flag = flag_name(name)
        matches = sorted({f for o in table.options for f in o.flags if f.startswith(flag)})
        if len(matches) > 1:  # argparse's allow_abbrev: an ambiguous prefix is its exit 2
            raise ValueError(f"{name}: SGLang {table.sglang_version}'s parser refuses {flag} as "
                             f"ambiguous (it could be {' or '.join(matches[:4])}); write the one you mean "
                             "in full, with underscores")
        hint = did_you_mean(name, [o.dest for o in table.options])
        raise ValueError(f"{name}: not a server argument of SGLang {table.sglang_version}{hint}; check "
                         "its spelling (underscore names, as `python -m sglang.launch_server --help` "
                         "lists them with dashes); a flag of another SGLang version goes in "
                         "server.extra_args as it is")
    if option.action in ("store_true", "boolean_optional", "store_const"):
        if not isinstance(value, bool):  # a bare flag: given (true) or not (false)
            raise ValueError(f"{name}: expected true or false (a switch), got {_shown(value)}")
        return option.dest
    many = option.nargs not in (None, "?")  # "+", "*" or a count: a YAML list, each item checked
    if many and (value is None or isinstance(value, dict)):
        raise ValueError(f"{name}: expected a list, each item {_KIND[option.type]}, got {_shown(value)}")
    items = value if many and isinstance(value, list) else [value]
    if not many and isinstance(value, list):
        raise ValueError(f"{name}: expected one value, got a list {value!r}")
    if isinstance(option.nargs, int) and len(items) != option.nargs:
        raise ValueError(f"{name}: expected {option.nargs} values, got {len(items)}")
    if option.nargs == "+" and not items:
        raise ValueError(f"{name}: expected at least one value, got an empty list")
    for item in items:
        _check_server_value(name, option, item)
    if option.dest == "page_size" and int(value) < 1:
        raise ValueError(f"page_size: {value!r}; a page holds at least 1 token")
    return option.dest


#: What a value of each type of SGLang's table is called in an error (``tuner.sglang.server_args``:
#: int, float, or str for every other parser SGLang gives, its custom ones included, which read text)
_KIND = {"int": "an integer", "float": "a number", "str": "a string"}


def _shown(value: Any) -> str:
    """``value`` as an error shows it, in YAML's words where Python's differ (null, a mapping)."""
    if value is None:
        return "null (leave the key out for SGLang's default)"
    return f"a mapping {value!r}" if isinstance(value, dict) else repr(value)


def _check_server_value(name: str, option, value: Any) -> None:
    """One value of ``option`` as SGLang's argparse reads it: its type (the text argparse gets is
    ``str(value)``, so a string, an integer or a number; never null, a switch's true/false, a list or
    a mapping), one of its choices."""
    if isinstance(value, float) and not math.isfinite(value):  # as every float of the files (StrictModel)
        raise ValueError(f"{name}: must be a finite number, got {value!r}")
    expected = _KIND[option.type]
    if option.type == "int":
        ok = _parses(value, int)
    elif option.type == "float":
        ok = _parses(value, float)
    else:
        ok = isinstance(value, (str, int, float)) and not isinstance(value, bool)
    if ok and option.choices and str(value) not in option.choices:
        raise ValueError(f"{name}: {value!r} is not one of SGLang's choices "
                         f"({', '.join(option.choices)}){did_you_mean(str(value), option.choices)}")
    if not ok and option.type == "str" and isinstance(value, dict):
        # SGLang parses such an option's text itself (json_model_override_args: json.loads); the
        # launcher passes the YAML value as the text, so a mapping must be written as JSON
        raise ValueError(f"{name}: expected a string (JSON text), got {_shown(value)}; write the "
                         f"mapping as JSON in quotes: {name}: '{json.dumps(value, default=str)}'")
    if not ok:
        raise ValueError(f"{name}: expected {expected}, got {_shown(value)}")
    problem = None if isinstance(value, bool) else option_like(str(value))  # str(): as argv holds it
    if problem is not None:
        raise ValueError(f"{name}: {problem}")


def option_like(text: str) -> str | None:
    """None, or why ``text`` cannot be a flag's value on SGLang's command line: its argparse reads it
    as an option (:meth:`tuner.sglang.server_args.ServerArgsTable.reads_as_option`), so the launch
    fails with "expected one argument", and SGLang's ``--config`` loader, which turns a YAML entry
    into the same two argv words (``utils/server_args_config_parser.py``), refuses an exported file
    holding it. The reason names the fix. A negative number (``-1``, ``-0.5``) is a value."""
    from ..sglang.server_args import server_args_table

    if not server_args_table().reads_as_option(text):
        return None
    try:
        float(text)
        fix = "write the number in plain decimals (-0.001, not -1e-3)"
    except ValueError:
        fix = f"write ./{text} for a path in the current folder, or a value not starting with '-'"
    return (f"{text!r} starts with '-', which SGLang's argparse reads as an option, not as this value "
            f"(the launch would fail: expected one argument); {fix}")


def _parses(value: Any, kind: type) -> bool:
    """Whether SGLang's argparse would read ``value`` as ``kind`` (an int, or a float)."""
    if isinstance(value, bool) or (kind is int and isinstance(value, float)):
        return False
    try:
        return math.isfinite(kind(value))  # "16" too: argparse reads the text
    except (TypeError, ValueError):
        return False


def load_space(path: str | Path) -> SearchSpaceConfig:
    """Load and validate a search-space file; raises :class:`ConfigError`."""
    return load_model(SearchSpaceConfig, path)



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
        """The distinct settings SGLang would really run, valid ones only, sorted."""
        return sorted({res.effective for _, res in self.proposals() if res.ok})

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
