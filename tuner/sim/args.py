"""The simulated server's command line: SGLang's launch flags, ``--config FILE``, and ``--sim-*``.

Three steps, in SGLang's order (``sglang/srt/server_args.py``, ``prepare_server_args``):

1. :func:`merge_config` puts the entries of a ``--config`` YAML file in front of the command line, as
   SGLang's ``ConfigArgumentMerger`` (``srt/utils/server_args_config_parser.py``) does, so the
   command line wins. Keys are turned into flags as written: ``tp-size: 8`` becomes
   ``--tp-size 8``, ``enable-metrics: true`` a bare ``--enable-metrics``; an underscore key such as
   ``speculative_num_steps`` becomes ``--speculative_num_steps``, which argparse then rejects.
2. :func:`build_parser` parses with SGLang 0.5.23's complete flag set (:mod:`tuner.sglang.server_args`)
   and SGLang's ``allow_abbrev``: unknown flags, bad values and ambiguous prefixes such as
   ``--cuda-graph-max-bs`` exit 2 (argparse's own behaviour, as SGLang's). A bad value for a
   simulator flag (``--sim-*``) is one line naming the flag and the fix instead, exit 2.
3. :func:`resolve_launch` applies SGLang's speculative rules through :mod:`tuner.sglang.rules` (the one copy
   of each rule): warnings are logged as SGLang logs them, and a setting SGLang refuses at launch
   raises SGLang's own exception class and message, which the entry point lets escape as a
   traceback (exit 1), before any simulated model loading.

Why one module (past 400 lines): the three steps are SGLang's ``prepare_server_args`` and argument
handling in SGLang's order; split, which check runs before which (the GPU checks before the
speculative hook, the backend default before both) would live nowhere.
"""

from __future__ import annotations

import argparse
import json
import logging
from dataclasses import dataclass, replace
from pathlib import Path

from ..sglang.adaptive import adaptive_candidate_steps, adaptive_unsupported_reason, resolve_adaptive
from ..sglang.arg_types import cuda_graph_sizes_problem, validate_cuda_graph_config
from ..sglang.kv_cache import HICACHE_WITHOUT_RADIX, hicache_without_radix
from ..sglang.mamba import MambaCache
from ..sglang.parallel import launch_check_refusal
from ..sglang.rules import (
    EAGLE_ALGORITHMS,
    STAGE_STARTUP,
    RuleViolation,
    SpecConfig,
    resolve,
    resolve_max_running_requests,
)
from ..sglang.server_args import ServerOption, server_args_table
from .parser import DEFAULT_PROFILE, PARSED_TYPES, TEXT_TYPES, SimArgumentParser, bounded_number

#: The SGLang release whose flags, API and failures the simulator mirrors.
SGLANG_VERSION = "0.5.23"

#: ``sglang/srt/arg_groups/choices.py``: ATTENTION_BACKEND_CHOICES (names only).
ATTENTION_BACKENDS = (
    "triton", "torch_native", "flex_attention", "dsa", "nsa", "qsa", "dsv4", "compressed", "fa3",
    "fa4", "flashinfer", "llada2_cfg_flashinfer", "flashmla", "trtllm_mla", "cutedsl_mla",
    "tokenspeed_mla", "trtllm_mha", "hpc_ops", "minicpm_flashattn", "minicpm_flashinfer", "aiter",
    "wave", "intel_amx", "ascend", "intel_xpu",
)


#: Argument names that are the simulator's own, not SGLang server arguments.
SIM_ARGS = (
    "sim_profile", "sim_speedup", "sim_load_seconds", "sim_noise", "sim_seed",
    "sim_crash_after_requests", "sim_hang_on_start", "sim_fail_startup",
)


_positive_float = bounded_number(float, 0.0, inclusive=False)
_non_negative_float = bounded_number(float, 0.0)
_positive_int = bounded_number(int, 1)


def _sglang_flags(dest: str, *fallback: str) -> tuple[str, ...]:
    """The option strings SGLang 0.5.23 registers for ``dest`` (one source for both parsers)."""
    option = server_args_table().option(dest)
    return option.flags if option is not None else fallback


class _ConstForValue(argparse.Action):
    """SGLang's DeprecatedStoreConstAction with ``nargs=None`` (``arg_groups/argparse_actions.py``):
    a retired valued flag (``--monokernel-backend amd``) takes one of its choices and stores its
    constant on the field that replaced it (``enable_amd_monokernel``). It takes one value, so
    SGLang's ``--config`` loader takes it too."""

    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, self.const)


def _add_sglang_option(group, option: ServerOption) -> None:
    """One of SGLang's flags the simulator only reports: parsed as SGLang's parser would (kind,
    nargs, choices; ints and floats checked), stored under SGLang's ``dest``."""
    kwargs: dict = {"dest": option.dest, "default": argparse.SUPPRESS, "help": argparse.SUPPRESS}
    if option.action == "store_true":
        action = group.add_argument(*option.flags, action="store_true", **kwargs)
    elif option.action == "boolean_optional":
        action = group.add_argument(*option.flags, action=argparse.BooleanOptionalAction, **kwargs)
    elif option.action == "store_const" and option.nargs is None:
        action = group.add_argument(*option.flags, action=_ConstForValue, const=option.const,
                                    choices=option.choices, **kwargs)
    elif option.action == "store_const":
        action = group.add_argument(*option.flags, action="store_const", const=option.const, **kwargs)
    else:
        kind = {**PARSED_TYPES, "float": float}.get(option.type, str)
        action = group.add_argument(*option.flags, type=kind, nargs=option.nargs,
                                    choices=option.choices if option.type in TEXT_TYPES else None, **kwargs)
    # SGLang's own action class where its --config loader refuses the option (the table records
    # it: a deprecated store_true flag parses as store_true here, yet the loader refuses it)
    action.config_refused = option.config_refused


def build_parser(prog: str = "python -m tuner.sim") -> argparse.ArgumentParser:
    """SGLang 0.5.23's launch parser (every flag of ``sglang serve``, abbreviations allowed as in
    SGLang, so an ambiguous prefix exits 2 as it does there), plus ``--sim-*``.

    The flags the simulator acts on are defined here with their types and checks; every other
    SGLang flag comes from :mod:`tuner.sglang.server_args` and is parsed and reported in
    ``/server_info``, nothing more.
    """
    p = SimArgumentParser(
        prog=prog,
        description="Simulated SGLang server: SGLang's launch flags, HTTP API and failure modes, "
                    "timed by a performance model (no GPU).",
    )
    g = p.add_argument_group("SGLang server arguments")
    g.add_argument(*_sglang_flags("model_path"), dest="model_path", required=True,
                   help="Model name or path (only reported; the simulator loads no weights).")
    g.add_argument(*_sglang_flags("tokenizer_path"), dest="tokenizer_path", default=None)
    g.add_argument(*_sglang_flags("served_model_name"), dest="served_model_name", default=None)
    g.add_argument(*_sglang_flags("tp_size"), dest="tp_size", type=int, default=1)
    g.add_argument(*_sglang_flags("host"), dest="host", default="127.0.0.1")
    g.add_argument(*_sglang_flags("port"), dest="port", type=int, default=30000)
    g.add_argument(*_sglang_flags("speculative_algorithm"), dest="speculative_algorithm", default=None)
    g.add_argument(*_sglang_flags("speculative_draft_model_path"),
                   dest="speculative_draft_model_path", default=None)
    for dest in ("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens",
                 "max_running_requests", "cuda_graph_max_bs_decode", "context_length", "page_size"):
        kind = PARSED_TYPES[server_args_table().option(dest).type]  # human_int: --context-length 128k
        g.add_argument(*_sglang_flags(dest), dest=dest, type=kind, default=None)
    for dest in ("speculative_use_rejection_sampling", "speculative_adaptive", "enable_metrics",
                 "trust_remote_code"):
        g.add_argument(*_sglang_flags(dest), dest=dest, action="store_true")
    g.add_argument(*_sglang_flags("speculative_adaptive_config"), dest="speculative_adaptive_config",
                   default=None)
    g.add_argument(*_sglang_flags("mem_fraction_static"), dest="mem_fraction_static", type=float)
    g.add_argument(*_sglang_flags("attention_backend"), dest="attention_backend",
                   choices=ATTENTION_BACKENDS, default=None)
    # SGLang's types: any int (0 or less streams every step, as 1), any text (its logger checks it)
    g.add_argument(*_sglang_flags("stream_interval"), dest="stream_interval", type=int, default=1)
    g.add_argument(*_sglang_flags("log_level"), dest="log_level", default="info")
    g.add_argument("--config", default=None, metavar="FILE",
                   help="Flat YAML mapping of server arguments (dash keys), merged under the command line.")
    defined = {a.dest for a in p._actions}
    rest = p.add_argument_group("other SGLang server arguments (parsed and reported only)")
    for option in server_args_table().options:
        if option.dest not in defined:
            _add_sglang_option(rest, option)
    s = p.add_argument_group("simulator arguments")
    s.add_argument("--sim-profile", default=DEFAULT_PROFILE, metavar="NAME|FILE",
                   help="Performance-model profile: a bundled name or a YAML file (default: %(default)s).")
    s.add_argument("--sim-speedup", type=_positive_float, default=1.0, metavar="X",
                   help="Wall clock runs X times faster than model time (default: %(default)s).")
    s.add_argument("--sim-load-seconds", type=_non_negative_float, default=1.0, metavar="S",
                   help="Simulated model loading, wall seconds, before the server is ready.")
    s.add_argument("--sim-noise", type=_non_negative_float, default=None, metavar="R",
                   help="Relative jitter of step times (default: 0, none; profiles carry no noise).")
    s.add_argument("--sim-seed", type=int, default=0, metavar="N")
    s.add_argument("--sim-crash-after-requests", type=_positive_int, default=None, metavar="N",
                   help="Die abruptly (os._exit) once the N-th generate request has been accepted.")
    s.add_argument("--sim-hang-on-start", action="store_true", help="Never become ready.")
    s.add_argument("--sim-fail-startup", default=None, metavar="MSG",
                   help="After the load delay, print MSG as the failing exception and exit 1.")
    return p


# --------------------------------------------------------------------------------------------------
# --config: srt/utils/server_args_config_parser.py, ConfigArgumentMerger


def _store_true_keys(parser: argparse.ArgumentParser) -> set[str]:
    keys: set[str] = set()
    for action in parser._actions:
        if isinstance(action, argparse._StoreTrueAction):
            keys.add(action.dest)
            keys.update(o[2:].replace("-", "_") for o in action.option_strings if o.startswith("--"))
    return keys


def _unsupported_keys(parser: argparse.ArgumentParser) -> dict[str, str]:
    """SGLang's ``ConfigArgumentMerger`` (``utils/server_args_config_parser.py``): a YAML key of an
    action that is neither store_true nor takes one value (``--flag/--no-flag`` switches,
    store_const, and the table's ``config_refused`` options: SGLang's DeprecatedStoreTrueAction and
    LoRAPathAction) is refused, naming the action's class; a key a supported action also reads stays."""
    def keys(action) -> set[str]:
        return {action.dest} | {o[2:].replace("-", "_") for o in action.option_strings if o.startswith("--")}

    supported = [a for a in parser._actions if not getattr(a, "config_refused", None) and (
                 isinstance(a, argparse._StoreTrueAction) or isinstance(a, argparse._StoreAction) or a.nargs is None)]
    ok = {k for a in supported for k in keys(a)}
    return {k: getattr(a, "config_refused", None) or type(a).__name__ for a in parser._actions
            if a.option_strings and a not in supported and not {"--config", "--help", "-h"} & set(a.option_strings)
            for k in keys(a) if k not in ok}


def _config_path(argv: list[str]) -> str | None:
    where = [i for i, arg in enumerate(argv) if arg == "--config"]
    if len(where) > 1:
        raise ValueError("Multiple config files specified! Only one allowed.")
    if not where:
        return None
    if where[0] == len(argv) - 1:
        raise ValueError("No config file specified after --config flag!")
    return argv[where[0] + 1]


def _config_entries(path: str) -> dict:
    import yaml

    if Path(path).suffix.lower() not in (".yaml", ".yml"):
        raise ValueError(f"Config file must be YAML format, got: {Path(path).suffix}")
    if not Path(path).exists():
        raise ValueError(f"Config file not found: {path}")
    with open(path) as fh:
        data = yaml.safe_load(fh)
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError("Config file must contain a dictionary at root level")
    return data


def merge_config(argv: list[str], parser: argparse.ArgumentParser) -> list[str]:
    """The command line with a ``--config`` file's entries in front (the command line wins).

    Raises ``ValueError`` with SGLang's messages for a second ``--config``, a missing file name, a
    file that is not ``.yaml``/``.yml`` or does not exist, or a top level that is not a mapping.
    """
    path = _config_path(argv)
    if path is None:
        return list(argv)
    store_true = _store_true_keys(parser)
    unsupported = _unsupported_keys(parser)
    front: list[str] = []
    for key, value in _config_entries(path).items():
        flag = f"--{key}"  # as written: underscore keys stay underscored and argparse rejects them
        norm = key.replace("-", "_")  # as SGLang's: a key that is not text (`1: x`), AttributeError
        if norm in unsupported:
            raise ValueError(f"Unsupported config option '{norm}' with action '{unsupported[norm]}'")
        if isinstance(value, bool):
            if norm in store_true:
                if value:
                    front.append(flag)
            else:
                front += [flag, str(value).lower()]
        elif isinstance(value, list):
            if value:
                front += [flag, *(str(v) for v in value)]
        elif isinstance(value, dict):
            front += [flag, json.dumps(value)]
        else:
            front += [flag, str(value)]
    at = argv.index("--config")
    return front + list(argv[:at]) + list(argv[at + 2:])


def parse_args(argv: list[str]) -> argparse.Namespace:
    """Merge ``--config`` and parse. Argparse errors exit 2; config-file errors raise ``ValueError``."""
    parser = build_parser()
    return parser.parse_args(merge_config(list(argv), parser))


def parse_to_check(argv: list[str], *, known_only: bool = False) -> argparse.Namespace:
    """``argv`` parsed as the simulated server parses its command (no ``--config`` merge), for a
    caller that checks a command rather than runs one: where the server would print argparse's
    message and exit 2, ``ValueError`` with that message. ``known_only``: flags the parser does not
    know are passed over (``parse_known_args``), not refused."""
    parser = build_parser()

    def refuse(message: str):
        raise ValueError(message)

    parser.error = refuse
    return parser.parse_known_args(argv)[0] if known_only else parser.parse_args(argv)


# --------------------------------------------------------------------------------------------------
# Resolution: tuner.sglang.rules applied the way SGLang's speculative_hook.py applies them


_EXCEPTIONS = {e.__name__: e for e in (AssertionError, TypeError, ValueError, RuntimeError, AttributeError)}


@dataclass(frozen=True)
class LaunchPlan:
    """What the simulated server runs after SGLang's argument handling.

    ``server_args`` are SGLang's server arguments with their resolved values (underscore names, as
    ``/server_info`` reports them). ``spec`` is the effective speculative setting, ``None`` for
    autoregressive decoding. ``startup_violation`` is a broken rule SGLang hits after the model has
    loaded and before the server is ready (an MLA tree on a chain-only backend; a draft tree larger
    than its candidates, in the draft CUDA-graph capture or SGLang's warmup): the server dies then.
    """

    server_args: dict
    spec: SpecConfig | None
    startup_violation: RuleViolation | None
    #: the scheduler's batch cap (at least 1: :func:`_running_cap`; None: from memory), which
    #: ``server_args["max_running_requests"]`` reports as given
    max_running_requests: int | None
    #: whether decode steps run as CUDA graphs at all (SGLang's decode graph backend not "disabled")
    decode_cuda_graphs: bool = True

    @property
    def speculative(self) -> bool:
        return self.spec is not None


def _raise_sglang(violation: RuleViolation) -> None:
    # SGLang's own exception class and message (a bare ``assert`` has none), so the traceback on
    # stderr reads as SGLang's: "AssertionError", "TypeError: '>' not supported ...".
    exc = _EXCEPTIONS.get(violation.sglang_exception, RuntimeError)
    if violation.sglang_message:
        raise exc(violation.sglang_message)
    raise exc()


def _raise_refusal(refusal: str) -> None:
    """Raise SGLang's exception from a refusal written ``"ValueError: its message"`` (as
    :mod:`tuner.sglang.attention` and :mod:`tuner.sglang.parallel` give them)."""
    exc, _, text = refusal.partition(": ")
    raise _EXCEPTIONS.get(exc, RuntimeError)(text)


def _attention_backend(ns: argparse.Namespace, profile) -> str | None:
    """``--attention-backend``, else SGLang's own choice for the profile's model and GPUs at the
    requested topk and page size (attention_hook.py runs before the speculative hook and reads the raw
    topk: unset is not 1, ``sglang_default_backend``)."""
    if ns.attention_backend is not None or profile is None:
        return ns.attention_backend
    from ..sglang.attention import sglang_default_backend

    split = bool(vars(ns).get("prefill_attention_backend") or vars(ns).get("decode_attention_backend"))
    return sglang_default_backend(profile.target_facts(), profile.gpu(), ns.speculative_eagle_topk,
                                  ns.page_size, split=split, speculative=ns.speculative_algorithm is not None)


def _handle_eagle_family(ns: argparse.Namespace, log: logging.Logger, profile=None):
    """speculative_hook.py ``_handle_eagle_family``: the 48 reset first, then the flag checks."""
    # Imported here: tuner.config.space loads the study-file schemas (pydantic), ~0.2 s of start-up that an
    # autoregressive server does not need.
    from ..config.space import context_from_args

    server_args = {**vars(ns), "attention_backend": _attention_backend(ns, profile)}
    mrr, warning = resolve_max_running_requests(ns.max_running_requests, speculative=True)
    if warning:
        log.warning(warning)
    requested = SpecConfig(ns.speculative_num_steps, ns.speculative_eagle_topk,
                           ns.speculative_num_draft_tokens)
    if ns.speculative_adaptive:
        requested = _adaptive(ns, requested, log)
    # the profile's architecture too: SGLang's automatic choice (all three flags unset) reads it
    # (speculative_hook.py, _auto_choose_speculative_params: (5, 4, 8) for Llama)
    facts = ((profile.model.attention, profile.draft.attention, profile.model.architecture or None)
             if profile is not None else (None, None, None))
    ctx = context_from_args(ns.speculative_algorithm, server_args, *facts)
    # the profile's GPUs: the page size fa4 sets on SM100 (rules.resolved_page_size); a hybrid model's
    # radix cache was checked in _check_model_backends, where SGLang checks it (ctx.mamba_cache None)
    res = resolve(requested, replace(ctx, gpu=profile.gpu() if profile is not None else None, mamba_cache=None))
    for line in res.warnings:
        log.warning(line)
    if res.violation is not None and res.violation.at_launch:
        _raise_sglang(res.violation)
    # A setting SGLang documents as unsupported but runs (STAGE_UNSUPPORTED) runs here too.
    startup = res.violation if res.violation is not None and res.violation.stage == STAGE_STARTUP else None
    return res.effective, startup, mrr


def _adaptive(ns: argparse.Namespace, requested: SpecConfig, log: logging.Logger) -> SpecConfig:
    """SGLang's --speculative-adaptive checks (tuner.sglang.rules). The simulator then runs the resolved
    num_steps for every batch size: it does not model SGLang's per-batch-size step changes."""
    import json

    # SGLang switches adaptive off (_maybe_disable_adaptive) before it reads a table
    # (_init_adaptive_speculative_params; speculative_hook.py lines 261-264): a setting it switches
    # off runs without one, so the FILE the simulator needs is asked only for a setting that stays
    candidates: list[int] = []
    if adaptive_unsupported_reason(requested, vars(ns)) is None:
        if ns.speculative_adaptive_config is None:
            raise ValueError("the simulated server needs --speculative-adaptive-config FILE with "
                             "--speculative-adaptive (SGLang's built-in default table is not modelled)")
        with open(ns.speculative_adaptive_config) as f:
            candidates = adaptive_candidate_steps(json.load(f))
    spec, warning = resolve_adaptive(requested, candidates, vars(ns))
    if warning:
        log.warning(warning)
        ns.speculative_adaptive = False
    else:
        log.warning("simulator: adaptive steps by batch size are not simulated; every batch runs "
                    "num_steps=%d", spec.num_steps)
    return spec


def _rename_deprecated_backends(ns: argparse.Namespace, log: logging.Logger) -> None:
    """serving_hook.py, ``_handle_deprecated_args`` (early in SGLang's pipeline, before the model and
    attention hooks): ``tokenspeed_mla`` is ``cutedsl_mla`` (as a prefill backend ``trtllm_mla``),
    ``compressed`` is ``dsv4``, each with SGLang's warning; ``tokenspeed_mla`` as the attention or
    decode backend also sets ``kv_cache_dtype`` fp8_e4m3 and, with speculation, attention mode
    decode (:func:`tuner.sglang.rules.resolve_backend_aliases`). The checks after it, and
    ``/server_info``, see the new names."""
    from ..sglang.rules import BACKEND_ALIASES, BACKEND_ARGS, resolve_backend_aliases

    given = vars(ns)
    renamed = resolve_backend_aliases(given, ns.speculative_algorithm is not None)
    for name in BACKEND_ARGS:
        if given.get(name) in BACKEND_ALIASES:
            log.warning("--%s=%s is deprecated; use '%s' instead.", name.replace("_", "-"), given[name],
                        BACKEND_ALIASES[given[name]])
    if "tokenspeed_mla" in (given.get("attention_backend"), given.get("decode_attention_backend")) \
            and given.get("kv_cache_dtype", "auto") != "fp8_e4m3":  # the dtype is set by the rename
        log.warning("tokenspeed_mla required FP8 KV; setting --kv-cache-dtype=fp8_e4m3.")
    for name, value in renamed.items():
        if given.get(name) != value:
            setattr(ns, name, value)


def _check_model_backends(ns: argparse.Namespace, profile) -> None:
    """The refusals SGLang makes before its GPU checks of the backends, with or without speculation:
    model_hook.py's (``handle_model_specific_adjustments``: GPT-OSS, Llama 4, Olmo2 refuse some
    backends; then a hybrid model's radix cache, :mod:`tuner.sglang.mamba`; it runs before
    attention_hook.py), then attention_hook.py's Flex Attention assert on a
    speculative server (:func:`tuner.sglang.rules.resolve`'s first three rules)."""
    from ..sglang.rules import ServerContext

    # not context_from_args: tuner.config.space's schemas (pydantic) would slow every start-up
    # model_hook.py reads attention_backend after the model overrides but before attention_hook.py's
    # generic default: given, else the model's own override (gpt_oss.py sets none with a split given)
    split = bool(vars(ns).get("prefill_attention_backend") or vars(ns).get("decode_attention_backend"))
    gpt_oss_split = split and profile is not None and profile.model.architecture == "GptOssForCausalLM"
    ctx = ServerContext(speculative_algorithm=ns.speculative_algorithm,
                        attention_backend=ns.attention_backend if gpt_oss_split else _attention_backend(ns, profile),
                        prefill_attention_backend=vars(ns).get("prefill_attention_backend"),
                        decode_attention_backend=vars(ns).get("decode_attention_backend"),
                        target_architecture=profile.model.architecture or None if profile is not None else None,
                        page_size=_model_override_page_size(ns, profile),
                        mamba_cache=MambaCache.from_args(vars(ns)))
    # the draft tokens as given: a hybrid model's radix cache reads them (model_hook.py line 737)
    speculative = ns.speculative_algorithm is not None
    res = resolve(SpecConfig(num_draft_tokens=ns.speculative_num_draft_tokens if speculative else None), ctx)
    if res.violation is not None and res.violation.rule in ("model-backend", "mamba-cache", "flex-attention-spec"):
        _raise_sglang(res.violation)


def _model_override_page_size(ns: argparse.Namespace, profile) -> int:
    """``page_size`` as model_hook.py's radix-cache check reads it: as given, or with no attention
    backend given the model override's (``sglang_default_page_size``: a Qwen3.5 hybrid on SM100 runs
    page size 64 on trtllm_mha, else 1 on triton, whatever was given). QA: SGLang 0.5.23's child for
    Qwen3-Next on sm100 with --page-size 48 started (page size 1, triton); on sm90 it refuses it."""
    if ns.attention_backend is not None or profile is None:
        return ns.page_size or 1
    from ..sglang.attention import sglang_default_page_size

    return sglang_default_page_size(profile.target_facts(), profile.gpu(), ns.speculative_eagle_topk,
                                    ns.page_size)


def _check_data_parallelism(ns: argparse.Namespace) -> dict:
    """SGLang's data-parallel checks (:func:`tuner.sglang.parallel.data_parallel_layout`), after the
    attention hook, before the speculative one: its exception, else the layout as ``/server_info``
    reports it, with what attention DP rewrites (``DataParallelLayout.reported``), then the LM-head
    flags' checks and resolution (:func:`tuner.sglang.parallel.lm_head_layout`)."""
    from ..sglang.parallel import data_parallel_layout, lm_head_layout

    layout = data_parallel_layout(vars(ns), ns.tp_size)
    if layout.error is not None:
        _raise_refusal(layout.error)
    lm_head, error = lm_head_layout(vars(ns), layout, ns.tp_size)
    if error is not None:
        _raise_refusal(error)
    return {**layout.reported(vars(ns)), **lm_head}


def _check_backends_on_gpu(ns: argparse.Namespace, profile) -> None:
    """SGLang's GPU checks of the target's backends during argument handling, before the speculative
    hook (``tuner.sglang.attention.launch_gpu_refusal``): its exception (trtllm_mha on an SM80
    profile, trtllm_mla off Blackwell, cutedsl_mla as the prefill backend), with or without
    speculation."""
    if profile is None:
        return
    from ..sglang.attention import launch_gpu_refusal
    from ..sglang.rules import ServerContext, resolved_attention_backend

    prefill, decode = vars(ns).get("prefill_attention_backend"), vars(ns).get("decode_attention_backend")
    attention = resolved_attention_backend(ServerContext(attention_backend=_attention_backend(ns, profile),
                                                         prefill_attention_backend=prefill,
                                                         decode_attention_backend=decode))
    refusal = launch_gpu_refusal(attention, prefill, decode, profile.gpu(), profile.model.attention,
                                 prefill_given=prefill, kv_cache_dtype=vars(ns).get("kv_cache_dtype", "auto"))
    if refusal is not None:
        _raise_refusal(refusal)


def _runner_gpu_refusal(ns: argparse.Namespace, profile, speculative: bool) -> RuleViolation | None:
    """fa3 on a GPU it does not run on, as a model runner builds it after the model load
    (``attention_registry.py`` line 243, ``create_flashattention_v3_backend``'s assert: SM 8.x for
    non-MLA models, SM 9.x): the target's prefill and decode backends (after the fa3 fp8_e5m2
    fallback), then the draft runner's (:func:`tuner.sglang.attention.runner_backends`, which study
    create's check reads too). QA (qa150): Kimi K2.6 on an SM120 profile with
    ``--attention-backend fa3`` started the simulator; SGLang's scheduler dies as it starts."""
    if profile is None:
        return None
    from ..sglang.attention import gpu_refusal, runner_backends

    given = vars(ns)
    kinds = {"target": profile.model.attention, "draft": profile.draft.attention}
    runners = runner_backends(_reported_attention_backend(ns, profile), given.get("prefill_attention_backend"),
                              given.get("decode_attention_backend"),
                              given.get("speculative_draft_attention_backend"),
                              given.get("kv_cache_dtype"), speculative)
    for backend, runner in runners:
        kind = kinds[runner]
        # the other GPU checks (trtllm_mla, trtllm_mha, cutedsl_mla) are argument handling's, of the
        # target's backends (_check_backends_on_gpu); a runner that starts asserts fa3's alone
        refusal = gpu_refusal(backend, profile.gpu(), kind) if backend == "fa3" else None
        if refusal is not None:
            exception, _, message = refusal.partition(": ")
            return RuleViolation("backend-gpu", f"attention backend {backend} does not start on this GPU: "
                                 f"{message}", exception, message, at_launch=False, stage=STAGE_STARTUP)
    return None


def _reported_attention_backend(ns: argparse.Namespace, profile) -> str | None:
    """``attention_backend`` as SGLang's ``/server_info`` reports it (overrides.py): the prefill
    backend when prefill and decode are given alike (``_attention_backend_default``), else the one
    given or SGLang's default; then fa3 with ``kv_cache_dtype`` fp8_e5m2 is triton
    (``_attention_backend_fa3_fp8_fallback``: "FlashAttention3 only supports fp8_e4m3 if using FP8")."""
    prefill, decode = vars(ns).get("prefill_attention_backend"), vars(ns).get("decode_attention_backend")
    from ..sglang.attention import fa3_fp8_fallback

    backend = prefill if prefill is not None and prefill == decode else _attention_backend(ns, profile)
    return fa3_fp8_fallback(backend, vars(ns).get("kv_cache_dtype"))


def _resolved_page_size(ns: argparse.Namespace, profile) -> int:
    """``page_size`` as SGLang runs and reports it: the model override's (no backend given:
    ``sglang_default_page_size``, 64 for a Qwen3.5 hybrid on trtllm_mha), then the backends' snaps
    (overrides.py, ``_mla_backend_page_constraints``: 64 for flashmla, trtllm_mla, cutedsl_mla,
    trtllm_mha and hpc_ops outside the sizes each takes; ``_fa4_page_constraint``: 128 for fa4 on
    SM100), as :func:`tuner.sglang.rules.resolved_page_size` has them; the topk as given."""
    from ..sglang.rules import ServerContext, resolved_page_size

    if profile is None:
        return ns.page_size or 1
    page = ns.page_size or 1
    if ns.attention_backend is None:
        from ..sglang.attention import sglang_default_page_size

        page = sglang_default_page_size(profile.target_facts(), profile.gpu(), ns.speculative_eagle_topk,
                                        ns.page_size)
    ctx = ServerContext(attention_backend=_attention_backend(ns, profile), page_size=page,
                        prefill_attention_backend=vars(ns).get("prefill_attention_backend"),
                        decode_attention_backend=vars(ns).get("decode_attention_backend"),
                        draft_attention_backend=vars(ns).get("speculative_draft_attention_backend"),
                        target_attention=profile.model.attention, gpu=profile.gpu())
    return resolved_page_size(ctx, ns.speculative_eagle_topk)


def _decode_cuda_graphs(ns: argparse.Namespace, attention: str | None) -> bool:
    """Whether SGLang captures decode CUDA graphs: cuda_graph_hook.py, ``_parse_cuda_graph_config``,
    in its precedence (``--disable-cuda-graph``, then ``--disable-decode-cuda-graph``, then
    ``--cuda-graph-backend-decode``, then ``--cuda-graph-config``'s decode backend), then
    attention_hook.py: the torch_native and flex_attention backends disable them."""
    given = vars(ns)
    backend = "full"
    if given.get("disable_cuda_graph") or given.get("disable_decode_cuda_graph"):
        backend = "disabled"
    if given.get("cuda_graph_backend_decode") is not None:
        backend = given["cuda_graph_backend_decode"]
    decode = (given.get("cuda_graph_config") or {}).get("decode")
    if isinstance(decode, dict) and "backend" in decode:
        backend = decode["backend"]
    return backend != "disabled" and attention not in ("torch_native", "flex_attention")


def _running_cap(mrr: int | None, attn_dp_size: int) -> int | None:
    """The batch cap the scheduler runs for ``--max-running-requests`` as resolved (``mrr``; None: from
    memory) over ``attn_dp_size`` attention-DP workers (:func:`tuner.sglang.parallel.running_requests_cap`):
    SGLang reports the value given. QA: ``--max-running-requests 0`` started the simulator with no cap
    at all, and ``12`` with ``--attn-dp-size 8`` ran 12 at once where SGLang runs 8."""
    from ..sglang.parallel import running_requests_cap

    return mrr if mrr is None else running_requests_cap(mrr, attn_dp_size)


def _resolved_algorithm(algorithm: str | None) -> str | None:
    """``--speculative-algorithm`` as SGLang runs and reports it (speculative_hook.py,
    ``handle_speculative_decoding``: ``upper()``, then ``_resolve_speculative_algorithm_alias``:
    NEXTN and EAGLE are EAGLE)."""
    if algorithm is None:
        return None
    return "EAGLE" if algorithm.upper() == "NEXTN" else algorithm.upper()


def resolve_launch(ns: argparse.Namespace, log: logging.Logger, profile=None) -> LaunchPlan:
    """Apply SGLang's argument handling. Logs SGLang's warnings; raises SGLang's exception for a
    setting it refuses at launch (``AssertionError``, ``TypeError``, ``ValueError``). ``profile``
    (a :class:`tuner.sim.profile.Profile`) plays the model's config.json and the GPUs: SGLang's
    attention-backend choice and the MLA rules read it."""
    algorithm = ns.speculative_algorithm
    spec = violation = None
    mrr = ns.max_running_requests
    validate_cuda_graph_config(getattr(ns, "cuda_graph_config", None))  # SGLang's pipeline.py: before spec
    # then handle_gpu_memory_settings sizes the graphs' batch sizes (memory_hook.py), still before spec
    sizes = cuda_graph_sizes_problem(getattr(ns, "cuda_graph_config", None),
                                     {"decode": getattr(ns, "cuda_graph_bs_decode", None),
                                      "prefill": getattr(ns, "cuda_graph_bs_prefill", None)})
    if sizes is not None:
        _raise_refusal(sizes)
    # SGLang's pipeline.py order: the deprecated names, the model hook, then the attention hook's checks
    _rename_deprecated_backends(ns, log)
    _check_model_backends(ns, profile)
    _check_backends_on_gpu(ns, profile)
    layout = _check_data_parallelism(ns)
    if algorithm is not None:
        if algorithm.upper() not in EAGLE_ALGORITHMS:
            raise ValueError(
                f"The simulated server implements --speculative-algorithm "
                f"{', '.join(EAGLE_ALGORITHMS)} only, got {algorithm!r}."
            )
        spec, violation, mrr = _handle_eagle_family(ns, log, profile)
    # kv_cache_hook.py (handle_cache_compatibility, after the speculative hook): the hierarchical cache
    # needs the radix cache (tuner.sglang.kv_cache)
    if hicache_without_radix(vars(ns)):
        raise ValueError(HICACHE_WITHOUT_RADIX)
    # the target's runner builds its attention backend after the model load, before the draft's
    violation = _runner_gpu_refusal(ns, profile, algorithm is not None) or violation
    # Every field SGLang's ServerArgs has, at its default, overlaid with what was parsed
    # (ServerArgs.resolved_dict(): srt/server_args.py); SGLang's own resolution of the values
    # that depend on the model and the GPUs is added by the server (tuner.sim.server_info).
    args = server_args_table().defaults()
    args.update({k: v for k, v in vars(ns).items() if k not in SIM_ARGS and k != "config"})
    args.update(layout)
    args["page_size"] = _resolved_page_size(ns, profile)
    args["attention_backend"] = _reported_attention_backend(ns, profile)
    args["max_running_requests"] = mrr
    # speculative_hook.py, handle_speculative_decoding: the name upper-cased, then
    # _resolve_speculative_algorithm_alias: NEXTN is EAGLE (what /server_info reports)
    args["speculative_algorithm"] = _resolved_algorithm(algorithm)
    args["served_model_name"] = ns.served_model_name or ns.model_path
    args["tokenizer_path"] = ns.tokenizer_path or ns.model_path
    if spec is not None:
        args.update(spec.server_args())
    # then SGLang's launch checks, before anything loads (validation_hook.py, check_server_args)
    refusal = launch_check_refusal(args, ns.tp_size, algorithm)
    if refusal is not None:
        _raise_refusal(refusal)
    return LaunchPlan(server_args=args, spec=spec, startup_violation=violation,
                      max_running_requests=_running_cap(mrr, args["attn_dp_size"]),
                      decode_cuda_graphs=_decode_cuda_graphs(ns, args["attention_backend"]))
