"""The study file (``studies/*.yaml``) as a typed, validated object.

Validation happens once, here, at the edge: :func:`load_study` also loads the search space and the
suite the file names (relative to the file), so everything past it may trust its input. Errors are
:class:`tuner.config.yamlfile.ConfigError`: one line naming the file, the key and what is expected.

Why one module of over 400 lines: it is the schema of one file, one pydantic model per section,
and the checks that need the whole file (the suite, the space, a landscape's concurrencies against
the objectives); a reader finds the study file's every key here. The parts that stand alone already
live beside it: ``sampler.py`` (the samplers' options), ``slo.py``,
``landscape.py``, ``suite.py``, ``space.py``.
"""

from __future__ import annotations

import ipaddress
import os
import re
from collections.abc import Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal, Union

from pydantic import AfterValidator, Field, ValidationInfo, field_validator, model_validator

from .durations import _duration_checked, parse_duration, seconds_only  # noqa: F401 (re-exported)
from .extra_args import extra_args_given, extra_args_problem
from .paths import NonEmptyPathText, PathText, is_bare_name, model_path_not_expanded, sqlite_url
from .sampler import check_sampler_options
from .slo import SLO
from .server_arg_checks import check_server_args, option_like, reserved_arg, unmeasurable_problem
from .space import DEFAULT_SPACE, SHIPPED_SPACES, load_space, unknown_space_problem
from .suite import (INLINE_SUITE, SHIPPED_SUITES, STUDY_HINT, TooManySinglePrompts, check_as_written,
                    load_suite, refuse_text_and_file)
from .yamlfile import (MAX_DURATION_S, ConfigError, StrictModel, did_you_mean, load_model, parse_model,
                       written_numbers, yaml_text)

#: The environment variable naming the default Optuna storage URL (several nodes, one study).
STORAGE_ENV_VAR = "TUNER_STORAGE"
#: The longest study name: it becomes file names (``NAME.db``, the workdir) and Optuna study names.
MAX_NAME_LENGTH = 100
#: The suffix of each study's companion that stores its baseline (``tuner.engine.study`` takes it
#: from here), so no study may be named with it.
BASELINE_SUFFIX = ".baseline"
#: The companion holding ``tuner study confirm``'s measurements (tuner.engine.confirm).
CONFIRM_SUFFIX = ".confirm"
#: Every companion study's suffix, and what it holds: names reserved, never a study of their own.
COMPANIONS = {BASELINE_SUFFIX: "baseline", CONFIRM_SUFFIX: "confirmation"}


def companion_of(name: str) -> tuple[str, str] | None:
    """``(study, what)`` when ``name`` is a companion study's (``x.baseline`` -> ``("x",
    "baseline")``), else None."""
    for suffix, what in COMPANIONS.items():
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[:-len(suffix)], what
    return None


#: The most launches a study's budget may hold (``budget.n_trials``, ``run --n-trials``, and the
#: total ``run --add-trials`` makes): as many as a search space may hold settings
#: (:data:`tuner.config.space.MAX_COMBINATIONS`), some 70 days of launches at one a minute. A larger
#: figure is a typo or a stand-in for "no bound", which ``n_trials: null`` says (QA: 10**18 was taken).
MAX_TRIALS = 100_000


def check_added_budget(name: str, old: int, add: int) -> None:
    """Refuse (:class:`ConfigError` naming ``--add-trials``) raising study ``name``'s budget of ``old``
    launches by ``add`` past :data:`MAX_TRIALS`."""
    if old + add > MAX_TRIALS:
        raise ConfigError("--add-trials", str(add), f"would raise study {name}'s budget.n_trials {old} to "
                          f"{old + add}; a budget holds at most {MAX_TRIALS} launches: add at most "
                          f"{max(MAX_TRIALS - old, 0)}")


#: What a study name is made of (the study file's ``name``, ``tuner study copy``'s new name).
NAME_PATTERN = r"[A-Za-z0-9][A-Za-z0-9._-]*"


def study_name_problem(name: str) -> str | None:
    """What is wrong with ``name`` (not of :data:`NAME_PATTERN`, too long, or a companion study's
    name), or None. Shared by the study file and ``tuner study copy``."""
    if not re.fullmatch(NAME_PATTERN, name):  # said in words (QA: pydantic's regular expression)
        return (f"{name!r} is not a study name: letters, digits and ._- only, starting with a letter or digit "
                "(it names the study's files, NAME.db and NAME/); rename it")
    # The name becomes file names (NAME.db, the workdir, exports): a long one fails there, late.
    if len(name) > MAX_NAME_LENGTH:
        return f"{len(name)} characters; a study name has at most {MAX_NAME_LENGTH}"
    companion = companion_of(name)
    if companion is not None:
        study, what = companion
        return (f"names may not end in '{name[len(study):]}', which is reserved for the {what} companion study "
                f"('{name}' is the companion of study '{study}'); choose another name")
    return None


#: A duration key as written in the file (see :func:`parse_duration`), checked when it loads.
Duration = Annotated[Union[str, int, float, None], AfterValidator(_duration_checked)]


#: The largest ``server.sim.speedup``. SGLang has no such flag; the bound is physical: the shipped
#: profiles' steps last milliseconds of model time, which at 100,000x are tens of nanoseconds of wall
#: time, less than one Python call of the simulator's scheduler, so every figure would be the
#: simulator's own overhead (QA: 1e308 was taken, then the baseline failed, "e2e_latency 0 for 8
#: tokens cannot be true", after the study was written). Tests launch at 5,000x to start fast; the
#: figures are distorted long before the cap (README: 1000 on two cores read a baseline 17% slow).
MAX_SIM_SPEEDUP = 100_000.0


class SimSettings(StrictModel):
    """How the simulated server runs (``server.backend: sim``)."""

    profile: PathText = "k2.6-tp8-pcie"  #: a shipped profile name or a path to a profile YAML
    #: wall clock runs this many times faster than model time; 20 keeps measured figures within
    #: ~3% of the model on 2 cores (benchmarks/sim_fidelity.py); much faster and HTTP overhead shows
    speedup: float = Field(20.0, gt=0)
    load_seconds: float = Field(0.5, ge=0)  #: model-load time before ready, in wall seconds
    _seconds_only = field_validator("load_seconds", mode="before")(seconds_only)
    noise: float = Field(0.02, ge=0, lt=1)  #: relative jitter of step times
    seed: int | None = None

    @field_validator("speedup")
    @classmethod
    def _a_clock_it_can_keep(cls, v: float):
        if v > MAX_SIM_SPEEDUP:
            raise ValueError(f"{v:g} is more than {MAX_SIM_SPEEDUP:,.0f}x: a simulated step would last less "
                             "wall time than one call of the simulator, so every figure would be its own "
                             "overhead; give 20 (the demo's) or at most a few hundred where figures matter")
        return v


class StatedFacts(StrictModel):
    """Model and GPU facts a study states, for a node where the tuner cannot read them itself
    (no ``config.json`` of the model or draft on this machine, no ``nvidia-smi``). Read facts win
    where both exist only if they agree; a disagreement is reported by ``tuner doctor``."""

    model_attention: Literal["mla", "mha"] | None = None  #: the target's attention kind
    draft_attention: Literal["mla", "mha"] | None = None  #: the EAGLE draft head's attention kind
    #: the GPUs' compute capability, e.g. "9.0" (Hopper) or "10.0" (Blackwell B200)
    gpu_compute_capability: str | None = None

    @field_validator("gpu_compute_capability", mode="before")
    @classmethod
    def _capability(cls, v):
        if v is None:
            return None
        from ..sglang.hardware import GpuArch

        GpuArch.parse(str(v))  # raises with the expected forms
        return str(v)


# -- server.backend: model (issue 17) --------------------------------------------------------------
#: The largest ``server.model.noise``: 2.5 times the largest noise the README's figures use (0.04),
#: and small enough that the model backend's draws never reach their clips (a launch's figure at 1%
#: of its truth, a request's at 10%: tuner.engine.model_backend, model_suite), 9 sigma away.
MAX_MODEL_NOISE = 0.1


class ModelSettings(StrictModel):
    """``server.backend: model``: no process and no HTTP; every measurement is the simulator's
    performance model for a profile, or a row of a landscape table (:mod:`tuner.config.landscape`),
    times seeded noise. Exactly one of ``profile`` and ``landscape``; relative paths are relative
    to the study file."""

    profile: PathText | None = None  #: a shipped simulator profile name or a profile YAML file
    landscape: NonEmptyPathText | None = None  #: a landscape table JSON file
    noise: float = Field(0.02, ge=0, lt=1)  #: relative standard deviation of every measured figure
    seed: int | None = None  #: the noise's seed (None: a fresh draw every run)
    #: modelled seconds a launch takes before the suite runs (model load); default: the table's
    #: ``load_s``, else 600
    load_s: float | None = Field(None, ge=0, le=MAX_DURATION_S)
    _seconds_only = field_validator("load_s", mode="before")(seconds_only)
    #: the landscape table's SHA-256, filled in when the study file loads (give it to pin the
    #: file): a study is one landscape, compared by content, never by path
    landscape_sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")

    @field_validator("noise")
    @classmethod
    def _believable(cls, v, info: ValidationInfo):
        # A relative deviation of 50% on every figure cannot be meant: the README's studies and
        # search benchmarks use 0.02 (the default) and 0.04, and large noise reaches the model
        # backend's clips, storing figures no server reads (at 0.7 one launch in 13 reads 1% of its
        # truth). Held to on a file only, as budget.n_trials: a study stored with it still opens.
        if v > MAX_MODEL_NOISE and (info.context or {}).get("path") is not None:
            raise ValueError(f"{v} is a relative standard deviation of {v:.0%} on every measured figure, "
                             f"which no measurement has (the README's figures use 0.02 to 0.04); give at "
                             f"most {MAX_MODEL_NOISE}")
        return v

    @model_validator(mode="after")
    def _one_source(self):
        if (self.profile is None) == (self.landscape is None):
            raise ValueError("give exactly one of profile (a simulator profile) and landscape (a table JSON file)")
        return self


def _model_paths(study, base: Path, path: Path) -> dict[str, Any]:
    """``server.model`` made absolute against the study file's folder, its landscape table loaded
    (and checked against the objectives); ``{}`` for the other backends."""
    from .landscape import load_landscape

    server = study.server
    if server.backend != "model":
        if server.model is not None:
            raise ConfigError(path, "server.model", f"is read by backend model only (backend is {server.backend}); "
                              "remove it or set server.backend: model")
        return {}
    if server.model is None:
        raise ConfigError(path, "server.model", "backend model needs {profile: NAME_OR_FILE} or "
                          "{landscape: FILE.json}")
    for name in study.objectives:
        if name.startswith("goodput"):
            raise ConfigError(path, "objectives", f"{name} needs request latencies; backend model has "
                              "throughput figures only")
    if study.slo:
        raise ConfigError(path, "slo", "latency limits need request latencies; backend model has throughput "
                          "figures only")
    model = server.model
    update: dict[str, Any] = {}
    profile = _profile_file(model.profile, base, path, "server.model.profile")
    if profile is not None:
        update["profile"] = profile
        _no_special_file(Path(profile), path, "server.model.profile")
    if model.landscape is not None:
        table_path = Path(_named_file(model.landscape, (), base, path, "server.model.landscape", bare=True))
        try:
            table = load_landscape(table_path)
        except ConfigError as exc:
            if exc.key:
                raise  # inside the table: its file and key
            raise ConfigError(path, "server.model.landscape", f"{table_path}: {exc.message}") from None
        for name in study.objectives:
            c = objective_concurrency(name)
            if c is not None and c not in table.concurrencies:
                raise ConfigError(path, "objectives", f"{name} needs tok_per_s@{c}, which the landscape "
                                  f"{table_path} does not have (its concurrency: "
                                  f"{', '.join(map(str, table.concurrencies))})")
        if model.landscape_sha256 is not None and model.landscape_sha256 != table.sha256:
            raise ConfigError(path, "server.model.landscape_sha256", f"{table_path} has SHA-256 {table.sha256}, not "
                              "the one the study file pins; the table changed")
        update["landscape"] = str(table_path)
        update["landscape_sha256"] = table.sha256
    return {"server": server.model_copy(update={"model": model.model_copy(update=update)})}
# -- end of server.backend: model --------------------------------------------------------------------


def _printable(path: str) -> str:
    """``path`` unchanged, or ``ValueError`` for a control character (a newline, a NUL): a path
    holding one is a paste gone wrong, and would break the command line or the log it is written to."""
    from .names import control_char

    bad = control_char(path)  # C1 controls and U+2028 too (QA: '\x9b' was taken, and printed raw)
    if bad is not None:
        raise ValueError(f"holds the control character {bad!r}; a path is one line of printable text")
    return path


def _flow_item(word: str) -> str:
    """``word`` as an item of a YAML flow list that reads back as that very text: plain where YAML 1.2
    reads plain text as itself, else in single quotes."""
    plain = bool(word) and not any(c in word for c in ",[]{}#'\"") and word == word.strip()
    try:
        plain = plain and yaml_text(f"[{word}]") == [word]
    except Exception:  # not valid YAML plain: quote it
        plain = False
    return word if plain else "'" + word.replace("'", "''") + "'"


def _model_path(path: str, info: ValidationInfo) -> str:
    """``path`` unchanged, or ``ValueError`` for a ``~`` or ``$VAR`` nobody will expand
    (:func:`tuner.config.paths.model_path_not_expanded`); held to on a file only: a study stored
    before the check still opens (status, export)."""
    return path if info.context is None else model_path_not_expanded(path)


def _a_flag_value(path: str) -> str:
    """``path`` unchanged, or ``ValueError`` when SGLang's argparse would read it as an option
    (``-models/kimi``): the launch writes it after ``--model-path`` (or ``--speculative-draft-model-
    path``), and so does the export (:func:`tuner.config.server_arg_checks.option_like`)."""
    problem = option_like(path)
    if problem is not None:
        raise ValueError(problem)
    return path


#: One label of a host name: letters, digits and '-' (RFC 1123), '_' too (seen on internal
#: networks, and resolvers take it), not starting or ending with '-'.
_HOST_LABEL = re.compile(r"(?!-)[A-Za-z0-9_-]{1,63}(?<!-)")


def _is_host(host: str) -> bool:
    """Whether ``host`` is an IP literal or a syntactically valid host name (no lookup)."""
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    name = host[:-1] if host.endswith(".") else host
    return 0 < len(name) <= 253 and all(_HOST_LABEL.fullmatch(label) for label in name.split("."))


#: The most GPUs ``server.tp_size`` may give. SGLang 0.5.23 states none (``arg_groups/fields/
#: parallel.py``, ``tp_size: int``); the bound is physical: a tensor-parallel group splits every
#: layer's attention heads across its GPUs (``layers/attention/xpu_backend.py``: ``num_attention_heads %
#: tp_size == 0``), and no model has more than a few hundred heads (Kimi K2.6 and DeepSeek V3 have 64
#: and 128); 1,024 is also far past any NVLink domain (72 GPUs today). QA: 2**70 was taken.
MAX_TP_SIZE = 1024

#: server.log_max_mb's default: a launch's server log is capped at 64 MiB (tuner.server.logcap)
DEFAULT_LOG_MAX_MB = 64.0
#: server.log_max_mb's most: a TiB (0 says "no cap")
MAX_LOG_MB = 1024.0 * 1024


#: The arguments SGLang 0.5.23's data-parallel layout reads (arg_groups/parallel_hook.py), and those its
#: LM-head checks read besides (arg_groups/overrides.py): where a refusal of them names its keys from
_DP_ARGS = ("attn_dp_size", "dp_size", "enable_dp_attention")
_LM_HEAD_ARGS = _DP_ARGS + ("enable_dp_lm_head", "enable_tp_lm_head_all_to_all", "attn_cp_size", "disaggregation_mode")


#: What extra_args sets that is checked as server.args is (:func:`check_server_args`): SGLang 0.5.23 takes
#: any number there, but runs a batch cap below 1 as 1 and cannot size every cuda_graph_config
_COUNTED_IN_EXTRA_ARGS = ("max_running_requests", "page_size", "cuda_graph_config", "cuda_graph_bs_decode",
                          "cuda_graph_bs_prefill")


def data_parallel_problem(args: dict[str, Any], tp_size: int) -> tuple[tuple[str, ...], str] | None:
    """Why SGLang 0.5.23 refuses the data-parallel layout or the LM-head flags of the server arguments
    ``args`` (underscore names: a study's ``server.args``, with its space's ``fixed`` and what its
    ``extra_args`` set) on ``tp_size`` GPUs while handling them, at every launch, the baseline's too:
    ``(the arguments it reads, the reason and the fix)``; None when it takes them, or when they are no
    numbers (their own check says so)."""
    from ..sglang.parallel import data_parallel_layout, lm_head_layout

    # arg_groups/parallel_hook.py refuses these while handling the arguments, on every launch;
    # attention DP that does not divide tp_size is a bare assert, no message (QA: taken at create)
    try:
        layout = data_parallel_layout(args, tp_size)
    except (TypeError, ValueError):  # not numbers: check_server_args has said so by its option
        return None
    if layout.error is None:
        # then the LM-head flags on that layout (overrides.py, _dp_lm_head_validation; QA: dp_size 2 with
        # enable_dp_lm_head, attention DP 1, was created and every launch failed)
        lm_error = lm_head_layout(args, layout, tp_size)[1]
        if lm_error is None:
            return None
        return _LM_HEAD_ARGS, (f"{lm_error.partition(': ')[2]} SGLang 0.5.23 refuses it while handling the "
                               "arguments, at every launch (arg_groups/overrides.py); give attn_dp_size (attention "
                               "DP) beside it, or leave the LM-head flag out")
    why = (f"attention data parallelism of {layout.attn_dp_size} does not divide tp_size {tp_size}"
           if layout.error.startswith("AssertionError") else layout.error)
    return _DP_ARGS, (f"{why}: SGLang 0.5.23 refuses it while handling the arguments, at every launch "
                      "(arg_groups/parallel_hook.py); give attn_dp_size a divisor of tp_size, and no dp_size "
                      "beside it")


def _an_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _where(extra: dict[str, Any], names: tuple[str, ...]) -> str:
    """Where a refusal of ``names`` points: ``args``, or ``args with extra_args`` when extra_args sets one
    of them (``extra``: what :func:`extra_args_given` read from it)."""
    return "args" if not any(n in extra for n in names) else "args with extra_args"


class ServerSettings(StrictModel):
    """The server each trial launches: SGLang on a GPU node, or the simulator; or, with
    ``backend: model``, no server at all (``model``: the performance model or a landscape table)."""

    backend: Literal["sim", "sglang", "model"] = "sim"
    #: the interpreter that has SGLang (backend sglang) or the tuner (backend sim); None means the
    #: interpreter running the tuner, decided on each worker (stored studies stay portable)
    python: str | None = None
    model_path: str
    draft_model_path: str | None = None
    tp_size: int = Field(1, ge=1)  #: at most MAX_TP_SIZE (_a_gpu_count)
    host: str = "127.0.0.1"
    port: int = Field(0, ge=0, le=65535)  #: 0 picks a free port per launch
    #: further SGLang server arguments, underscore names, e.g. mem_fraction_static: 0.85; any YAML
    #: value here, as check_server_args checks each by its option's type and says what it takes
    #: (a typed union would answer a mapping with its first member's "input should be a valid boolean")
    args: dict[str, Any] = Field(default_factory=dict)
    extra_args: list[str] = Field(default_factory=list)  #: raw argv appended last
    env: dict[str, str] = Field(default_factory=dict)
    startup_timeout_s: float = Field(600.0, gt=0)
    stop_grace_s: float = Field(30.0, gt=0)
    #: the most (MiB) one launch's server log holds (tuner.server.logcap); 0: no cap
    log_max_mb: float = Field(DEFAULT_LOG_MAX_MB, ge=0)
    sim: SimSettings = Field(default_factory=SimSettings)
    facts: StatedFacts = Field(default_factory=StatedFacts)
    model: ModelSettings | None = None  #: backend model only

    def with_extra_args(self, args: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``args`` (None: ``server.args``) with what ``extra_args`` sets laid over them, as SGLang's
        argparse reads a launch's command line (``extra_args`` appended last: the last value given
        wins; :func:`extra_args_given`). What the study's checks and the rules judge a launch by: the
        data-parallel layout, the LM-head flags, the hybrid-cache rules."""
        return {**(self.args if args is None else args), **extra_args_given(self.extra_args)}

    @field_validator("tp_size")
    @classmethod
    def _a_gpu_count(cls, v: int):
        if v > MAX_TP_SIZE:
            shown = f"{v}" if v < 10 ** 12 else f"a number of {len(str(v))} digits"
            raise ValueError(f"{shown} GPUs in one tensor-parallel group; give the GPUs the server runs on "
                             f"(at most {MAX_TP_SIZE})")
        return v

    @model_validator(mode="after")
    def _loads_before_the_timeout(self):
        # (QA: load_seconds 1e308 was taken: every launch then waited out startup_timeout_s, baseline first)
        if self.backend == "sim" and self.sim.load_seconds >= self.startup_timeout_s:
            raise ValueError(f"sim.load_seconds ({self.sim.load_seconds:g} s) must be shorter than "
                             f"startup_timeout_s ({self.startup_timeout_s:g} s): every launch would time out "
                             "while its model loads; lower sim.load_seconds")
        return self

    @model_validator(mode="after")
    def _data_parallel_layout_starts(self):
        # SGLang reads server.extra_args as it reads server.args (appended last on the command line):
        # QA: dp_size 2 in args with --enable-dp-lm-head in extra_args was created and every launch
        # failed, and enable_dp_lm_head with --enable-dp-attention there (attention DP) was refused
        extra = extra_args_given(self.extra_args)
        problem = data_parallel_problem({**self.args, **extra}, self.tp_size)
        if problem is not None:
            raise ValueError(f"{_where(extra, problem[0])}: {problem[1]}")
        return self

    @model_validator(mode="after")
    def _launch_checks_pass(self, info: ValidationInfo):
        # SGLang 0.5.23's check_server_args (arg_groups/validation_hook.py), run after the arguments are
        # resolved and before anything loads, at every launch, the baseline's too: nodes that do not
        # divide tp_size x pp_size, DP replicas across nodes, a chunked_prefill_size no multiple of a
        # page_size given beside it (a page size the backend decides is the launch check's to say).
        # QA (qa194): nnodes 3 at tp_size 8, chunked_prefill_size 1000 with page_size 16, were created.
        from ..sglang.parallel import launch_check_refusal

        extra = extra_args_given(self.extra_args)
        given = {**self.args, **extra}
        names = ("nnodes", "pp_size", "dp_size", "chunked_prefill_size", "page_size")
        try:
            refused = launch_check_refusal({k: given.get(k) for k in names + ("disaggregation_mode",)},
                                           self.tp_size, None)
        except (TypeError, ValueError):
            return self  # not numbers: their own check says so
        if refused is not None:
            keys = ", ".join(n for n in names if given.get(n) is not None)
            raise ValueError(f"{_where(extra, names)}: {keys}: SGLang 0.5.23 refuses every launch before loading "
                             f"({refused}; ServerArgs.check_server_args) with tp_size {self.tp_size}; fix them")
        # and its checks of the other arguments (tuner.sglang.launch_checks); QA (qa226): served_model_name
        # kimi:k2, enable_torch_compile with disable_cuda_graph_padding, retraction_policy priority alone,
        # were created and every launch would fail. A stored study (no file context) is read back as it
        # measured: one the simulator ran before these checks keeps its figures readable
        if info.context is None:
            return self
        from ..sglang import launch_checks as checks

        # unset, SGLang serves the model under its path (serving_hook.py line 642), which the check reads then
        named = {**given, "served_model_name": given.get("served_model_name") or self.model_path}
        for names, check in ((checks.PADDING_ARGS, checks.padding_refusal),
                             (checks.NAME_ARGS, checks.served_name_refusal),
                             (checks.SCHEDULING_ARGS, checks.scheduling_refusal)):
            try:
                refused = check({k: named.get(k) for k in names})
            except (TypeError, ValueError):
                continue  # not numbers: their own check says so
            if refused is None:
                continue
            why = f"SGLang 0.5.23 refuses every launch before loading, the baseline's too ({refused}; " \
                  "ServerArgs.check_server_args)"
            if check is checks.served_name_refusal:
                name = str(named["served_model_name"])
                plain = (name.rstrip("/").rsplit("/", 1)[-1] if given.get("served_model_name") is None else name)
                fix = f"give a served_model_name without ':' (served_model_name: {plain.replace(':', '-')})"
                if given.get("served_model_name") is None:
                    raise ValueError(f"model_path: {name!r}: unset, served_model_name is the model path, and "
                                     f"{why}; {fix} in server.args")
                raise ValueError(f"{_where(extra, names)}: served_model_name: {why}; {fix}")
            keys = ", ".join(n for n in names if given.get(n) is not None)
            raise ValueError(f"{_where(extra, names)}: {keys}: {why}; fix them")
        return self

    @model_validator(mode="after")
    def _extra_args_json_at_launch(self, info: ValidationInfo):
        # json_model_override_args and model_loader_extra_config in extra_args, held to what server.args
        # is held to (QA, qa228: text that is no JSON fails every launch in SGLang's json/orjson.loads);
        # on a file only, so a stored study still opens
        if info.context is None:
            return self
        from ..sglang.arg_types import JSON_AT_LAUNCH, json_at_launch_problem

        given = extra_args_given(self.extra_args)
        for dest in JSON_AT_LAUNCH:
            value = given.get(dest)
            if isinstance(value, str) and (problem := json_at_launch_problem(dest, value)) is not None:
                raise ValueError(f"extra_args: --{dest.replace('_', '-')} {value!r}: {problem}")
        return self

    @model_validator(mode="after")
    def _extra_args_counts_sglang_takes(self):
        # the checks server.args gets for these (server_arg_checks.py), on what extra_args sets: QA,
        # --max-running-requests 0 there was created and served one request at a time (no pin: the study
        # set it), and a cuda_graph_config SGLang cannot size ended every launch, the baseline's first
        # a word that is no number is said where a launch's command line is checked (preflight, doctor)
        extra = {k: v for k, v in extra_args_given(self.extra_args).items()
                 if k in _COUNTED_IN_EXTRA_ARGS and all(_an_int(x) for x in (v if isinstance(v, list) else [v]))
                 or k == "cuda_graph_config"}
        if not extra:
            return self
        given = {**self.args, **extra}
        try:
            check_server_args({k: given[k] for k in _COUNTED_IN_EXTRA_ARGS if k in given}, "extra_args")
        except ValueError as exc:
            raise ValueError(f"extra_args: {exc}") from None
        return self

    @field_validator("model_path")
    @classmethod
    def _a_path(cls, v: str, info: ValidationInfo):
        if not v.strip():
            raise ValueError("must name the model (a Hugging Face id or a folder), got an empty string")
        return _model_path(_a_flag_value(_printable(v)), info)

    @field_validator("draft_model_path")
    @classmethod
    def _a_draft_path(cls, v: str | None, info: ValidationInfo):
        return None if v is None else _model_path(_a_flag_value(_printable(v)), info)

    @field_validator("python")
    @classmethod
    def _printable_path(cls, v: str | None):
        return None if v is None else _printable(v)

    @field_validator("host")
    @classmethod
    def _a_host(cls, v: str):
        if not _is_host(v):
            raise ValueError(f"{v!r} is neither a host name (letters, digits, '-', '.') nor an IP address; "
                             "give one such as 127.0.0.1, ::1 or node-1.cluster")
        return v

    @field_validator("log_max_mb")
    @classmethod
    def _a_useful_cap(cls, v: float):
        # Under 1 MiB the kept head (a quarter) would not hold SGLang's startup lines.
        if 0 < v < 1:
            raise ValueError(f"must be 0 (no cap) or at least 1 (MiB), got {v:g}")
        # Over a TiB is no cap on any disk a node logs to, and 1e308 MiB ended every launch in
        # OverflowError (tuner.server.logcap counts bytes in an int; QA, after the study was written)
        if v > MAX_LOG_MB:
            raise ValueError(f"{v:g} MiB is more than a TiB ({MAX_LOG_MB:,.0f} MiB), no cap on any disk; "
                             "give 0 for no cap")
        return v

    @field_validator("env")
    @classmethod
    def _environment(cls, v: dict[str, str]):
        # What execve takes: a name without '=' (it would split the name) and no NUL anywhere (C
        # strings end there: Python refuses to launch with one).
        for name, value in v.items():
            if not name or "=" in name or "\0" in name:
                raise ValueError(f"{name!r} is not a variable name (non-empty, no '=' or NUL); "
                                 "write NAME: value")
            if "\0" in value:
                raise ValueError(f"{name}: the value holds a NUL byte, which no process environment can carry")
        return v

    @field_validator("args")
    @classmethod
    def _underscore_args(cls, v: dict, info: ValidationInfo):
        for name, value in v.items():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and "\0" in item:
                    raise ValueError(f"{name}: the value holds a NUL byte, which no command line can carry")
        # a stored study (no file context) is read back as it measured: a check added since keeps it readable
        return check_server_args(v, "args", written_numbers(info.context, "server.args."),
                                 stored=info.context is None)

    _seconds_only = field_validator("startup_timeout_s", "stop_grace_s", mode="before")(seconds_only)

    @field_validator("startup_timeout_s", "stop_grace_s")
    @classmethod
    def _within_a_year(cls, v: float):
        # as every other duration of a study (QA: 1e308 was taken, and the run said each trial
        # "may take up to" a 300-digit number of hours)
        if v > MAX_DURATION_S:
            raise ValueError(f"{v:g} s is longer than a year (the most a study may give: 366 days); check the unit")
        return v

    @field_validator("extra_args", mode="before")
    @classmethod
    def _words_as_a_list(cls, v: Any):
        # One text written as a shell line (`extra_args: "--served-model-name 'a b'"`): the launcher runs
        # no shell, so it is never split; the fix is its words as items (QA, qa228: "input should be a
        # valid list, got ...", naming no fix). shlex splits it as bash would, quotes removed.
        if not isinstance(v, str) or not v.strip():
            return v
        import shlex

        try:
            words = shlex.split(v)
        except ValueError:  # an unclosed quote: no split to suggest
            words = None
        shown = f"[{', '.join(_flow_item(w) for w in words)}]" if words else "[--flag, value, ...]"
        raise ValueError(f"expected a list of command-line words, got the text {v!r}; the server is started "
                         f"without a shell, so write each word as an item: extra_args: {shown}")

    @field_validator("extra_args")
    @classmethod
    def _no_reserved_flags(cls, v: list[str]):
        for i, arg in enumerate(v):
            if "\0" in arg:
                raise ValueError(f"entry {i} ({arg.split(chr(0))[0]!r}...) holds a NUL byte, which no "
                                 "command line can carry")
            before = v[i - 1] if i else ""
            if not arg.strip() and not (before.startswith("-") and "=" not in before):
                # no option's value: SGLang's argparse (which takes no positional argument) stops
                # every launch with "unrecognized arguments" (QA: created, then the baseline failed)
                raise ValueError(f"entry {i} is {arg!r}, the value of no option before it: every launch "
                                 "would fail with SGLang's 'unrecognized arguments'; remove it")
        for arg in v:
            flag = arg.split("=", 1)[0]
            owner = reserved_arg(flag[2:].replace("-", "_")) if flag.startswith("--") else None
            if owner is not None:
                raise ValueError(f"{flag} sets {owner}, which the tuner sets from the study's own keys; "
                                 "remove it")
            problem = unmeasurable_problem(flag[2:].replace("-", "_")) if flag.startswith("--") else None
            if problem is not None:
                raise ValueError(f"{flag}: {problem}; remove it")
        if (problem := extra_args_problem(v)) is not None:
            raise ValueError(problem)
        return v


class LosslessSettings(StrictModel):
    """The lossless check (suites at temperature 0): a trial whose single-request outputs match
    the baseline's in fewer than ``min_share`` of the requests is flagged; with ``enforce`` it is
    also infeasible (kept out of the picks, steered away from)."""

    min_share: float = Field(0.9, ge=0, le=1)
    enforce: bool = False


class BenchSettings(StrictModel):
    """The benchmark suite every trial and the baseline run, identically."""

    suite: Union[PathText, dict[str, Any]] = "seed"  #: ``seed``, ``quick``, a suite file, or inline
    #: SGLang's /generate, OpenAI /v1/completions, or OpenAI /v1/chat/completions (chat template)
    api: Literal["generate", "openai", "chat"] = "generate"
    stream: bool = False
    lossless: LosslessSettings = Field(default_factory=LosslessSettings)
    #: the most a trial may take, launch included (8h, 45m, ... or seconds); None: derived from the
    #: baseline's measured suite time (tuner.engine.deadline)
    trial_timeout: Duration = None

    @field_validator("suite")
    @classmethod
    def _a_suite(cls, v: str | dict):
        if isinstance(v, str) and not v.strip():  # (QA: said as "STUDY_FOLDER: is a folder; give a file")
            raise ValueError(f"is empty; give a shipped suite's name ({', '.join(SHIPPED_SUITES)}), a suite "
                             "file or an inline suite, or remove the key for seed")
        return v

    @property
    def trial_timeout_s(self) -> float | None:
        return parse_duration(self.trial_timeout)


#: ASCII digits without a leading zero: one spelling per objective (``speedup@032`` and a full-width
#: ``speedup@３２`` would be other names for speedup@32 in every table and export)
_OBJECTIVE = re.compile(r"(single_speedup|single_tok_per_s|"
                        r"(speedup|tok_per_s|goodput|goodput_tok_per_s)@([1-9][0-9]*))")


class SamplerSettings(StrictModel):
    name: Literal["auto", "local-tpe", "tpe", "nsgaii", "gp", "random", "grid"] = "auto"
    #: None: each worker draws its own seed (a shared seed would make a restarted worker
    #: propose the crashed trial's parameters again); numpy's range, which Optuna's samplers seed
    seed: int | None = Field(None, ge=0, le=2**32 - 1)
    #: keyword arguments for the sampler (for auto: tuner.engine.structured.StructuredSampler's; for
    #: local-tpe: local_prob, draft_factor, center_tolerance and TPESampler's; see
    #: tuner/engine/sampling.py), checked by tuner.config.sampler
    options: dict[str, Any] = Field(default_factory=dict)

    @field_validator("options")
    @classmethod
    def _options_of_the_sampler(cls, v: dict, info: ValidationInfo):
        name = info.data.get("name")
        return check_sampler_options(name, v) if name else v


class PruneSettings(StrictModel):
    """``budget.prune``: stop a trial once its partial figures show it is dominated by the front by
    more than the measured noise (tuner.engine.pruning). ``true``/``false`` set ``enabled`` alone."""

    enabled: bool = True
    #: trials measured with the whole suite before any is pruned: they give the front and the noise
    #: (at most a budget's launches: 10**30 was taken, and pruning silently never began)
    startup_trials: int = Field(4, ge=1, le=MAX_TRIALS)
    #: how many standard deviations of the partial-to-full error a dominated trial must clear
    z: float = Field(3.5, gt=0)
    #: and by how much more (relative): a setting within this of the front is never pruned
    margin: float = Field(0.01, ge=0, lt=1)


class BudgetSettings(StrictModel):
    #: launches in the whole study (pruned ones included); with only a ``timeout`` given, none: the
    #: time is the budget
    n_trials: int | None = Field(16, ge=1)
    #: 8h, 45m, ...; no new trial that would overrun (modelled GPU time on ``server.backend: model``)
    timeout: Duration = None
    prune: PruneSettings = Field(default_factory=PruneSettings)

    @field_validator("n_trials")
    @classmethod
    def _bounded(cls, v, info: ValidationInfo):
        # Held to on a file only (load_model passes its path): a config stored by an older tuner
        # with a larger budget must still open, for status, export and to run on.
        if v is not None and v > MAX_TRIALS and (info.context or {}).get("path") is not None:
            raise ValueError(f"{v} launches is more than any study runs; give at most {MAX_TRIALS} "
                             "(as many as a search space may hold settings), or n_trials: null for no bound")
        return v

    @field_validator("prune", mode="before")
    @classmethod
    def _switch(cls, v):
        if isinstance(v, bool):
            return {"enabled": v}
        if v is None:  # `prune:` with its mapping commented out, said as every empty key is
            raise ValueError("is empty (YAML null); give true, false or a mapping {enabled, startup_trials, z, "
                             "margin}, or remove the key")
        if not isinstance(v, (dict, PruneSettings)):
            raise ValueError("expected true, false or a mapping {enabled, startup_trials, z, margin}")
        return v

    @model_validator(mode="before")
    @classmethod
    def _time_alone(cls, data):
        # ``budget: {timeout: 8h}`` is a night, however many launches fit in it
        if isinstance(data, dict) and data.get("timeout") is not None and "n_trials" not in data:
            return {**data, "n_trials": None}
        return data

    @property
    def timeout_s(self) -> float | None:
        return parse_duration(self.timeout)


class SeedTrial(StrictModel):
    speculative_num_steps: int = Field(ge=1)
    speculative_eagle_topk: int = Field(ge=1)
    speculative_num_draft_tokens: int = Field(ge=2)


class StudyConfig(StrictModel):
    """``studies/*.yaml``: everything a worker needs to run the study, on any machine."""

    #: letters, digits and ._-, at most :data:`MAX_NAME_LENGTH`; never a companion's (``.baseline``, ``.confirm``)
    name: str  # checked by _a_study_name (study_name_problem)
    #: Optuna storage URL, or ``${VAR}``; default ``$TUNER_STORAGE`` when set, else an SQLite file
    #: ``NAME.db`` beside the study file; a relative SQLite file is beside the study file too
    storage: str | None = None
    #: a shipped space's name (``eagle3``, the default) or a file, relative to the study file; a
    #: shipped name wins over a file of that name beside it (``./eagle3`` names the file)
    search_space: PathText = DEFAULT_SPACE
    server: ServerSettings
    bench: BenchSettings = Field(default_factory=BenchSettings)
    #: what to maximize, each vs the autoregressive baseline measured with the same suite:
    #: single_speedup (mean single-request tok/s), speedup@C (aggregate tok/s at concurrency C),
    #: single_tok_per_s, tok_per_s@C
    objectives: list[str] = Field(default_factory=lambda: ["single_speedup", "speedup@32"], min_length=1)
    sampler: SamplerSettings = Field(default_factory=SamplerSettings)
    budget: BudgetSettings = Field(default_factory=BudgetSettings)
    #: trials measured first, after the default seed trials
    seed_trials: list[SeedTrial] = Field(default_factory=list)
    #: measure tuner.engine.seeds.DEFAULT_SEED_TRIALS first: SGLang's (3, 1, 4), (4, 8, 64) and
    #: (2, 4, 8) (the trees most often near an optimum on the training landscapes) and the large tree
    #: of SGLang's bench_speculative grid, (5, 8, 32)
    default_seed_trials: bool = True
    #: folder for per-trial logs; default ``studies/NAME/`` beside the study file
    workdir: PathText | None = None
    #: latency limits per sweep concurrency (tuner.config.slo); a trial that breaks one is infeasible
    slo: list[SLO] = Field(default_factory=list)

    @field_validator("search_space", "workdir")
    @classmethod
    def _not_blank(cls, v: str | None, info):
        # QA (the fuzz): an empty search_space was said as "STUDY_FOLDER: is a folder; give a file",
        # and an empty workdir read as the key left out (NAME/), as `--workdir ""` no longer is
        instead = {"search_space": f"give a shipped space's name ({', '.join(SHIPPED_SPACES)}) or a search-space "
                                   f"file, or remove the key for {DEFAULT_SPACE}",
                   "workdir": "give a folder, or remove the key for NAME/ beside the study file"}
        if v is not None and not v.strip():
            raise ValueError(f"is empty; {instead[info.field_name]}")
        return v

    @field_validator("name")
    @classmethod
    def _a_study_name(cls, v: str):
        problem = study_name_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("objectives")
    @classmethod
    def _objectives(cls, v: list[str]):
        for name in v:
            if not _OBJECTIVE.fullmatch(name):
                raise ValueError(f"unknown objective {name!r}; expected single_speedup, "
                                 f"single_tok_per_s, speedup@C, tok_per_s@C, goodput@C or "
                                 f"goodput_tok_per_s@C (C a concurrency)")
        if len(set(v)) != len(v):
            raise ValueError("objectives must not repeat")
        return v

    @field_validator("slo")
    @classmethod
    def _one_per_concurrency(cls, v: list[SLO]):
        seen = [s.concurrency for s in v]
        if len(set(seen)) != len(seen):
            raise ValueError("one slo entry per concurrency")
        return v

    @model_validator(mode="after")
    def _trial_timeout_after_startup(self):
        limit = self.bench.trial_timeout_s
        if limit is not None and limit <= self.server.startup_timeout_s:
            raise ValueError(f"bench.trial_timeout ({self.bench.trial_timeout}) must exceed "
                             f"server.startup_timeout_s ({self.server.startup_timeout_s:g} s): a trial's "
                             "deadline counts the server's start-up too")
        return self

    def slo_at(self, concurrency: int) -> SLO | None:
        return next((s for s in self.slo if s.concurrency == concurrency), None)


def objective_concurrency(name: str) -> int | None:
    """The sweep concurrency an objective reads (None for the single-request objectives)."""
    m = _OBJECTIVE.fullmatch(name)
    return int(m.group(3)) if m and m.group(3) else None


def load_study(path: str | Path, referenced: bool = True) -> StudyConfig:
    """Load and validate a study file, including the search space and suite it refers to.

    Relative paths in the file (search space, workdir) are made absolute against the study file's
    folder, so the returned object means the same thing from any working directory.
    ``referenced=False`` validates the study file alone and reads none of the files it names (space,
    suite, dataset, profile, landscape): enough for a command that reads the study from its storage,
    which keeps the space and suite the study measured (its name, storage and paths mean the same).
    """
    given = path
    if not str(given):  # Path("") is the current folder: "is a folder" would name the folder (QA: doctor '')
        raise ConfigError("<study file>", "", "empty; give the study's YAML file")
    path = _resolved(Path(path), path, "")
    if Path(given).is_symlink():
        _link_to_a_file(Path(given))
    if _is_sqlite(path):
        # QA: `tuner study status demo.db` said "not UTF-8 text (byte 106); save the file as UTF-8"
        raise ConfigError(given, "", f"is an SQLite database (a study's storage), not a study file; give the "
                          f"study's YAML file, or the study's name with --storage sqlite:///{given} (`tuner study "
                          f"list --storage sqlite:///{given}` names its studies)")
    written: dict[str, str] = {}  # the file's unquoted numbers as written, for an inline suite's errors
    study = load_model(StudyConfig, path, unquoted=written)
    base = path.parent
    if not referenced:
        return _paths_and_storage(study, base, path, _named_files_alone(study, base, path))
    space = study.search_space
    space_file = _named_file(space, SHIPPED_SPACES, base, path, "search_space")
    if space_file is None and space not in SHIPPED_SPACES:
        raise ConfigError(path, "search_space", f"{unknown_space_problem(space)}, as a path relative to "
                          f"the study file")
    space_path: str | Path = space_file or space  # a shipped one is kept as its name
    with _named_by(path, "search_space", space_path):
        space_config = load_space(space_path)  # fail now, naming the space file, not at the first trial
    _grid_within_the_space(study, space_config, path)
    _data_parallel_with_fixed(study, space_config.fixed, space_path)
    update: dict[str, Any] = {"search_space": str(space_path)}
    # The suite is checked now too, and a suite file is made absolute like the search space.
    suite = study.bench.suite
    if isinstance(suite, str) and suite not in SHIPPED_SUITES:
        file = _named_file(suite, SHIPPED_SUITES, base, path, "bench.suite")
        if file is None:
            raise ConfigError(path, "bench.suite", f"unknown suite {suite!r}{did_you_mean(suite, SHIPPED_SUITES)}; "
                              f"expected one of {', '.join(SHIPPED_SUITES)} or a suite YAML file")
        suite = file
        update["bench"] = study.bench.model_copy(update={"suite": suite})
    if isinstance(suite, dict) and suite.get("dataset") is not None and suite.get("prompts"):
        raise ConfigError(path, "bench.suite.prompts", "give prompts or dataset, not both")
    if isinstance(suite, dict):
        refuse_text_and_file(suite, path, "bench.suite.prompts")
    try:
        with _named_by(path, "bench.suite", suite if isinstance(suite, str) else None):
            inline_written = written_numbers({"unquoted": written}, "bench.suite.")
            loaded = load_suite(suite, base_dir=base, unquoted=inline_written, as_written=isinstance(suite, dict))
        if isinstance(suite, dict):
            check_as_written(loaded, path, "bench.suite.")  # (a suite file: by load_suite)
    except TooManySinglePrompts as exc:  # a study's own way on: it ran before the check
        if exc.source == INLINE_SUITE:  # (the inline suite's draw refused as it was read: load_suite)
            raise ConfigError(path, f"bench.suite.{exc.key}", exc.message + STUDY_HINT) from None
        raise ConfigError(exc.source, exc.key, exc.message + STUDY_HINT) from None
    except ConfigError as exc:
        if exc.source != INLINE_SUITE:
            raise
        raise ConfigError(path, f"bench.suite.{exc.key}" if exc.key else "bench.suite", exc.message) from None
    if isinstance(suite, dict):
        # An inline suite's files (prompt files, a dataset) are relative to the study file: keep
        # the loaded suite, which carries their contents, so nothing later reads them from elsewhere.
        update["bench"] = study.bench.model_copy(update={"suite": loaded.to_dict()})
    _check_against_suite(study, loaded, path)
    _running_cap_covers_objectives(study, space_config.fixed, path, space_path)
    profile = _profile_file(study.server.sim.profile, base, path, "server.sim.profile")
    if profile is not None:
        # A profile file is relative to the study file, like every other path in it (a shipped
        # profile is a bare name); it is checked, with the rest of what the server needs, by
        # tuner.engine.preflight before anything is written.
        _no_special_file(Path(profile), path, "server.sim.profile")
        sim = study.server.sim.model_copy(update={"profile": profile})
        update["server"] = study.server.model_copy(update={"sim": sim})
    update.update(_model_paths(study, base, path))
    return _paths_and_storage(study, base, path, update)


def _running_cap_covers_objectives(study: StudyConfig, fixed: dict[str, Any], path: Path,
                                   space_path: str | Path) -> None:
    """A ``max_running_requests`` below the concurrency an objective names (``speedup@32`` on a server
    that runs 16 at once) is refused naming where it is set: ``server.extra_args`` (last on the command
    line, it wins), ``server.args``, else the space's ``fixed``
    (:func:`tuner.config.running_cap.running_cap_problem`). QA (qa226): ``max_running_requests: 16``
    with ``speedup@32`` was created, and `tuner doctor` passed it."""
    from .running_cap import running_cap_problem

    server = study.server
    in_extra = "max_running_requests" in extra_args_given(server.extra_args)
    if in_extra and ("max_running_requests" in server.args or "max_running_requests" in fixed):
        return  # set twice: create refuses that first, whatever the values (command.merged_server_args)
    levels = [(name, c) for name in study.objectives if (c := objective_concurrency(name)) is not None]
    problem = running_cap_problem(server.with_extra_args({**fixed, **server.args}), server.tp_size, levels)
    if problem is None:
        return
    if in_extra:
        raise ConfigError(path, "server.extra_args", problem)
    if "max_running_requests" in server.args:
        raise ConfigError(path, "server.args", problem)
    raise ConfigError(str(space_path), "fixed", f"with the study's objectives: {problem}")


def _data_parallel_with_fixed(study: StudyConfig, fixed: dict[str, Any], space_path: str | Path) -> None:
    """A space's ``fixed`` that sets the data-parallel layout or an LM-head flag, judged with the study's
    server (``tp_size``, ``args``, ``extra_args``) as every launch's command line has them
    (:func:`data_parallel_problem`): :class:`ConfigError` naming the space file's ``fixed`` (QA: ``fixed:
    {dp_size: 2, enable_dp_lm_head: true}``, and ``attn_dp_size: 3`` on 8 GPUs, were created and every
    launch failed, the baseline's first; the space alone does not know ``tp_size``)."""
    if not any(name in fixed for name in _LM_HEAD_ARGS):
        return
    server = study.server
    problem = data_parallel_problem(server.with_extra_args({**fixed, **server.args}), server.tp_size)
    if problem is not None:
        raise ConfigError(str(space_path), "fixed", f"with the study's server (tp_size {server.tp_size}): {problem[1]}")


def _named_files_alone(study: StudyConfig, base: Path, path: Path) -> dict[str, Any]:
    """The files the study file names (search space, suite, profiles, landscape) made absolute as
    :func:`load_study` makes them, by the same rules (:func:`_named_file`, :func:`_profile_file`),
    without reading them."""
    update: dict[str, Any] = {}
    space = _named_file(study.search_space, SHIPPED_SPACES, base, path, "search_space")
    if space is not None:
        update["search_space"] = space
    suite = study.bench.suite
    if isinstance(suite, str) and (file := _named_file(suite, SHIPPED_SUITES, base, path, "bench.suite")):
        update["bench"] = study.bench.model_copy(update={"suite": file})
    server = study.server
    profile = _profile_file(server.sim.profile, base, path, "server.sim.profile")
    if profile is not None:
        server = server.model_copy(update={"sim": server.sim.model_copy(update={"profile": profile})})
    model = server.model
    if model is not None:
        files = {"profile": _profile_file(model.profile, base, path, "server.model.profile"),
                 "landscape": _named_file(model.landscape, (), base, path, "server.model.landscape", bare=True)}
        files = {key: file for key, file in files.items() if file is not None}
        server = server.model_copy(update={"model": model.model_copy(update=files)})
    if server is not study.server:
        update["server"] = server
    return update


def _named_file(text: str | None, shipped, base: Path, path: Path, key: str, bare: bool = False) -> str | None:
    """The file the value ``text`` of ``key`` names, made absolute against the study file's folder
    ``base``; None for no value, a ``shipped`` name, or (unless ``bare``) a bare name that is no
    file there: :func:`load_study` refuses that one as unknown, never looks it up elsewhere."""
    if text is None or text in shipped or (not bare and is_bare_name(text) and not (base / text).exists()):
        return None
    return str(_resolved(base / text, path, key))


def _profile_file(text: str | None, base: Path, path: Path, key: str) -> str | None:
    """A profile given as a path (a ``/`` or ``.yaml`` in it), made absolute like :func:`_named_file`;
    None for a shipped profile's bare name or no value."""
    return _named_file(text, (), base, path, key, bare=True) if text is not None and _is_path(text) else None


def _paths_and_storage(study: StudyConfig, base: Path, path: Path, update: dict[str, Any]) -> StudyConfig:
    """``study`` with ``update`` and its workdir and storage made absolute against the study file's
    folder ``base`` (the storage: the file's, else ``$TUNER_STORAGE``, else ``NAME.db`` beside it)."""
    from .files import dangling_link

    workdir = base / (study.workdir or study.name)
    # A link to nothing stays unresolved: resolve() would follow it, and create or run make its target
    # (QA: /nonexist2/zz at the root); their check_writable refuses it, readers never write there.
    update["workdir"] = str(workdir if dangling_link(workdir) else _resolved(workdir, path, "workdir"))
    if study.storage is not None:
        sqlite = _sqlite_file(study.storage, base, path)
        if sqlite is not None:
            update["storage"] = sqlite
    if study.storage is None:
        # No storage in the file: $TUNER_STORAGE when set (several nodes), else SQLite beside it.
        local = sqlite_url(base / (study.name + '.db'))
        update["storage"] = f"${{{STORAGE_ENV_VAR}}}" if os.environ.get(STORAGE_ENV_VAR) else local
    return study.model_copy(update=update)


def _grid_within_the_space(study: StudyConfig, space, path: Path) -> None:
    """The grid sampler's ``search_space`` option holds values of the study's search space only:
    Optuna's GridSampler warns of one out of range and uses it (QA: steps 10**30 was created, then
    launched as --speculative-num-steps 1000000000000000000000000000000). :class:`ConfigError` naming
    the option and the first such value."""
    grid = study.sampler.options.get("search_space") if study.sampler.name == "grid" else None
    for name, values in (grid or {}).items():
        allowed = set(space.values(name))
        outside = next((v for v in values if v not in allowed), None)
        if outside is not None:
            shown = f"{outside}" if abs(outside) < 10 ** 12 else f"a number of {len(str(abs(outside)))} digits"
            raise ConfigError(path, f"sampler.options.search_space.{name}", f"{shown} is not a value of the "
                              f"search space {study.search_space} ({_listed(sorted(allowed))}); give values of "
                              "the space, or widen it")


def _listed(values: list[int]) -> str:
    """``1-8`` for a run of consecutive integers, else the values, comma-separated."""
    if values and values == list(range(values[0], values[-1] + 1)) and len(values) > 2:
        return f"{values[0]}-{values[-1]}"
    return ", ".join(map(str, values))


@contextmanager
def _named_by(study_path: Path, key: str, target: str | Path | None):
    """A problem with the whole file ``target`` (missing, a folder, not UTF-8, not a mapping) said as
    the study file's: ``STUDY: KEY: TARGET: problem``, so the line names the file and key that
    refer to it (as ``server.model.landscape`` does); a problem at a key inside ``target`` keeps
    naming ``target`` and its key."""
    try:
        yield
    except ConfigError as exc:
        if target is None or exc.key or Path(exc.source) != Path(target):
            raise
        raise ConfigError(study_path, key, f"{target}: {exc.message}") from None


def sqlite_url_problem(url: str) -> str | None:
    """Why an SQLite storage URL cannot hold a study, or None (None too for any other URL): an
    in-memory database (gone when the command ends), a ``$VAR`` inside it (only a whole ``${VAR}``
    URL is read from the environment), a ``~`` (not expanded), or options after ``?`` or ``#`` --
    SQLite's URI mode (``uri=true``) names the file after its query or opens it read-only or in
    memory, and the driver ignores the rest with a warning (QA: a file named ``e3.db?vfs=memdb``,
    which no later command found). The study file's ``storage`` and ``--storage`` are both held to
    it (:func:`tuner.engine.storage.open_storage`)."""
    parts = _sqlite_parts(url)
    if parts is None:
        return None
    _, file, query = parts
    if file in ("", ":memory:") or "mode=memory" in query:
        return (f"{url!r} is an in-memory database, gone when the command ends; give a file, e.g. "
                "sqlite:///NAME.db")
    if "$" in file:
        return (f"{url!r}: a $VARIABLE inside a URL is not read from the environment; write the path out, "
                "or give the whole URL as ${VAR}")
    if file.startswith("~"):
        return (f"{url!r}: '~' is not expanded inside a URL; write the path out (sqlite:////home/me/NAME.db)"
                ", or give it relative to the study file")
    if "uri=" in query.lower() or "%75ri=" in query.lower():
        return (f"{url!r}: SQLite's URI mode (uri=...) is not supported; give a plain file, e.g. "
                "sqlite:///NAME.db")
    if query or "#" in file:
        return (f"{url!r}: options after '?' or '#' are not supported for SQLite (the driver ignores "
                "them, or they become part of the file's name); give a plain file, e.g. sqlite:///NAME.db")
    return None


def sqlite_storage_problem(url: str) -> str | None:
    """Why an SQLite storage URL cannot be opened here, or None (None too for any other URL): the
    URL's own problem first (:func:`sqlite_url_problem`: a '~' or '$HOME' is no folder to make),
    then a folder that does not exist or is no folder. SQLite makes the database file, never its
    folder, and its driver then says only "unable to open database file" (a study run took that
    for an outage and waited). A relative file is taken from the current directory, as the driver
    opens it (a study file's is absolute once loaded).

    The folder is not created for the user: nothing is written before the input is checked, a read
    never makes a file or folder, and a missing folder is most often a mistyped path or one relative
    to another directory, where a made folder would start an empty study no other worker finds."""
    problem = sqlite_url_problem(url)
    parts = _sqlite_parts(url)
    if problem is not None or parts is None:
        return problem
    from urllib.parse import unquote

    from .files import unusable_path

    file = Path(unquote(parts[1])).absolute()  # as SQLAlchemy reads it: %XX decoded
    unusable = unusable_path(file)
    shut = _unsearchable_folder(file) if unusable else None
    if shut is not None:
        # QA (qa159): another user's folder of mode 0700 said "fix the path": the path is right,
        # the folder's rights are what keep this user out
        return (f"{url!r}: {shut[0]} cannot be searched by this user ({shut[1]}), so no database file in it can "
                f"be opened; run as the user who can, or have its owner let you in (e.g. chmod g+x {shut[0]}, "
                "and its group yours)")
    if unusable:
        return f"{url!r}: no usable database file ({unusable}); fix the path"
    if file.is_dir():  # QA: "unable to open database file; run it again once the storage answers"
        return (f"{url!r}: {file} is a folder, not a database file; name the file in it "
                f"(sqlite:///{file / 'NAME.db'})")
    if parts[0] in ("sqlite", "sqlite+pysqlite") and not _holds_sqlite(file):
        # QA: `--storage sqlite:///study.yaml` said "cannot open: DatabaseError: file is not a database"
        return (f"{url!r}: {file} holds other data, not an SQLite database (SQLite: file is not a database; "
                "the tuner never overwrites it); give the study's .db file, or a new file name")
    folder = file.parent
    if folder.is_dir():
        return None
    # "no such storage", as a read of a missing file says (tuner.engine.storage): one wording for both
    if folder.exists() or any(p.exists() and not p.is_dir() for p in folder.parents):
        return (f"{url!r}: no such storage folder: {folder} is not a folder (it, or one above it, is a "
                "file; nothing was created); fix the path")
    return (f"{url!r}: no such storage folder: {folder} does not exist (SQLite makes the database file, "
            f"never its folder; nothing was created); fix the path, or create the folder first (mkdir -p {folder})")


def _unsearchable_folder(file: Path) -> tuple[Path, str] | None:
    """``(folder, the system's words)`` for the folder on the way to ``file`` this user may not search
    (no ``x`` for it: stat(2) of what is in it fails with EACCES), else None."""
    import errno
    import os

    chain = [*reversed(file.parents), file]
    for folder, inner in zip(chain, chain[1:]):
        try:
            os.stat(inner)
        except OSError as exc:
            if exc.errno in (errno.EACCES, errno.EPERM):
                return folder, exc.strerror or "Permission denied"
            return None
    return None


def _sqlite_file(url: str, base: Path, source: Path) -> str | None:
    """An SQLite ``storage`` of the study file as an absolute URL: a relative file is beside the
    study file, as every other path in it (else a worker started elsewhere would open another, empty
    study). None for any other URL. Raises :class:`ConfigError` for a URL no study can live in
    (:func:`sqlite_url_problem`)."""
    problem = sqlite_url_problem(url)
    if problem:
        raise ConfigError(source, "storage", problem)
    parts = _sqlite_parts(url)
    if parts is None or Path(parts[1]).is_absolute():
        return None
    from urllib.parse import unquote

    # the file as SQLAlchemy reads it (decoded), beside the study file; escaped again by sqlite_url
    return sqlite_url(_resolved(base / unquote(parts[1]), source, 'storage'), parts[0])


#: The first bytes of every SQLite database file (https://sqlite.org/fileformat.html, 1.3.1).
_SQLITE_HEADER = b"SQLite format 3\x00"


def _sqlite_head(file: Path) -> bytes | None:
    """The first bytes of ``file`` (as many as SQLite's header), or None when it is no regular file
    with bytes in it that can be read here."""
    import stat

    try:
        st = file.stat()
        if not stat.S_ISREG(st.st_mode) or st.st_size == 0:
            return None
        with open(file, "rb") as fh:
            return fh.read(len(_SQLITE_HEADER))
    except OSError:
        return None


def _holds_sqlite(file: Path) -> bool:
    """Whether ``file`` can be SQLite's: missing or empty (SQLite makes or fills it), not a regular
    file (the driver says what it is), unreadable here (the driver says so), or starting with
    SQLite's header. False only for a regular file that holds other bytes (a YAML, a log)."""
    head = _sqlite_head(file)
    return head is None or head == _SQLITE_HEADER


def _is_sqlite(file: Path) -> bool:
    """Whether ``file`` is an SQLite database: a regular file starting with SQLite's header."""
    return _sqlite_head(file) == _SQLITE_HEADER


def _sqlite_parts(url: str) -> tuple[str, str, str] | None:
    """``(scheme, file, query)`` of an SQLite URL (the file as written: relative unless it starts
    with ``/``), None for any other URL."""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme.split("+", 1)[0] != "sqlite":
        return None
    file, _, query = rest.removeprefix("/").partition("?")
    return scheme, file, query


def _link_to_a_file(link: Path) -> None:
    """:class:`ConfigError` naming ``link`` (the study file as given) when what it points at is no
    regular file to read: the file it reaches is named otherwise, a path the user never gave (QA fuzz:
    a link to nothing said ``error: /x/nowhere: file not found``, a link to /dev/null ``error:
    /dev/null: not a regular file``)."""
    from .yamlfile import check_regular_file

    try:
        check_regular_file(link)
    except ConfigError as exc:
        raise ConfigError(link, "", f"a link to {os.readlink(link)}: {exc.message}") from None


def _resolved(target: Path, source, key: str) -> Path:
    """``target`` made absolute, symlinks followed; a path no file can have (a NUL byte, a symlink
    loop, a name too long) is a :class:`ConfigError` naming ``source`` and ``key``, not a traceback."""
    try:
        return Path(target).resolve()
    except (OSError, RuntimeError, ValueError) as exc:
        what = "a symlink loop" if isinstance(exc, RuntimeError) else str(exc)
        raise ConfigError(source, key, f"{str(target)!r} is no usable path ({what}); give a real file or folder") from None


def _no_special_file(file: Path, source: Path, key: str) -> None:
    """:class:`ConfigError` naming ``source`` and ``key`` when the profile ``file`` exists and is
    neither a regular file nor a folder (a device such as /dev/null, a pipe, a socket), in the words
    a suite or space file gets; the simulator's profile reader calls it "file not found" (QA), and a
    missing file or a folder it words rightly itself."""
    from .yamlfile import check_regular_file

    if file.exists() and not file.is_dir() and not file.is_file():
        try:
            check_regular_file(file)
        except ConfigError as exc:
            raise ConfigError(source, key, f"{file}: {exc.message}") from None


def _is_path(profile: str) -> bool:
    """Whether ``server.sim.profile`` names a file (a shipped profile is a bare name)."""
    return "/" in profile or profile.endswith((".yaml", ".yml"))


def _check_against_suite(study: StudyConfig, suite, path: Path) -> None:
    """What the study file asks of the suite: every objective's concurrency swept (and single
    requests for the single-request objectives), SLO concurrencies it sweeps, streamed responses for
    TTFT and ITL limits, an SLO wherever a goodput objective counts good requests."""
    swept = set(suite.sweep.concurrencies)
    levels = ", ".join(map(str, sorted(swept))) or "none"
    for name in study.objectives:
        c = objective_concurrency(name)
        if c is not None and c not in swept:
            raise ConfigError(path, "objectives", f"{name}: the suite '{suite.name}' never measures "
                              f"concurrency {c} (it sweeps {levels}); add {c} to sweep.concurrencies or "
                              "change the objective")
        if c is None and suite.n_single_requests() == 0:
            raise ConfigError(path, "objectives", f"{name}: the suite '{suite.name}' measures no single "
                              "requests (single.lengths); give it some or change the objective")
    for i, slo in enumerate(study.slo):
        if slo.concurrency not in swept:
            raise ConfigError(path, f"slo[{i}].concurrency", f"{slo.concurrency} is not a concurrency the suite "
                              f"'{suite.name}' sweeps ({levels})")
        streamed = slo.needs_stream()
        if streamed and not study.bench.stream:
            raise ConfigError(path, f"slo[{i}].{streamed[0]}", "TTFT and ITL are measured on streamed "
                              "responses only; set bench.stream: true or limit e2e latency instead")
        itl = [key for key in slo.limits if key.startswith("itl_")]
        if itl and max((suite.sweep_tokens(p) for p in suite.cycled(slo.concurrency)), default=2) < 2:
            # A one-token answer has no gap between tokens: the limit would read "not measured", which
            # counts as broken (tuner.engine.limits), for the baseline and every trial alike.
            raise ConfigError(path, f"slo[{i}].{itl[0]}", f"every request the suite '{suite.name}' sends at "
                              f"C={slo.concurrency} generates 1 token: ITL (the gaps between tokens) is never "
                              "measured, so every trial would break the limit; raise sweep.max_tokens (or the "
                              "requests' max_tokens) above 1, or limit tpot or e2e latency instead")
    if study.bench.lossless.enforce and suite.temperature > 0:
        # Sampled outputs differ from the baseline's by chance: the check would flag every trial.
        raise ConfigError(path, "bench.lossless.enforce", f"the lossless check compares outputs at "
                          f"temperature 0, and the suite '{suite.name}' samples at temperature "
                          f"{suite.temperature:g}; set the suite's temperature to 0 or enforce: false")
    for name in study.objectives:
        if name.startswith("goodput"):
            c = objective_concurrency(name)
            if study.slo_at(c) is None:
                raise ConfigError(path, "objectives", f"{name} counts the requests that meet the SLO at "
                                  f"C={c}; add an slo entry with concurrency: {c}")


def study_from_dict(data: dict, source: str = "<stored study config>") -> StudyConfig:
    """Rebuild a study config stored in Optuna's user attributes (already absolute)."""
    return parse_model(StudyConfig, data, source)
