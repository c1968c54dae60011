"""The simulated server's command line: SGLang's launch flags, ``--config FILE``, and ``--sim-*``.

Three steps, in SGLang's order (``sglang/srt/server_args.py``, ``prepare_server_args``):

1. :func:`merge_config` puts the entries of a ``--config`` YAML file in front of the command line, as
   SGLang's ``ConfigArgumentMerger`` (``srt/utils/server_args_config_parser.py``) does, so the
   command line wins. Keys are turned into flags as written: ``tp-size: 8`` becomes
   ``--tp-size 8``, ``enable-metrics: true`` a bare ``--enable-metrics``; an underscore key such as
   ``speculative_num_steps`` becomes ``--speculative_num_steps``, which argparse then rejects.
2. :func:`build_parser` parses; unknown flags and bad values exit 2 (argparse's own behaviour).
3. :func:`resolve_launch` applies SGLang's speculative rules through :mod:`tuner.sglang.rules` (the one copy
   of each rule): warnings are logged as SGLang logs them, and a setting SGLang refuses at launch
   raises SGLang's own exception class and message, which the entry point lets escape as a
   traceback (exit 1), before any simulated model loading.
"""

from __future__ import annotations

import argparse
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from ..sglang.adaptive import adaptive_candidate_steps, resolve_adaptive
from ..sglang.rules import EAGLE_ALGORITHMS, RuleViolation, SpecConfig, resolve, resolve_max_running_requests

#: The SGLang release whose flags, API and failures the simulator mirrors.
SGLANG_VERSION = "0.5.23"

#: ``sglang/srt/arg_groups/choices.py``: ATTENTION_BACKEND_CHOICES (names only).
ATTENTION_BACKENDS = (
    "triton", "torch_native", "flex_attention", "dsa", "nsa", "qsa", "dsv4", "compressed", "fa3",
    "fa4", "flashinfer", "llada2_cfg_flashinfer", "flashmla", "trtllm_mla", "cutedsl_mla",
    "tokenspeed_mla", "trtllm_mha", "hpc_ops", "minicpm_flashattn", "minicpm_flashinfer", "aiter",
    "wave", "intel_amx", "ascend", "intel_xpu",
)

DEFAULT_PROFILE = "k2.6-tp8-pcie"

#: Argument names that are the simulator's own, not SGLang server arguments.
SIM_ARGS = (
    "sim_profile", "sim_speedup", "sim_load_seconds", "sim_noise", "sim_seed",
    "sim_crash_after_requests", "sim_hang_on_start", "sim_fail_startup",
)


def _number(kind: type, minimum: float, inclusive: bool = True):
    """An argparse ``type`` for an int or float bounded below (argparse turns errors into exit 2)."""

    def parse(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {kind.__name__} value: {text!r}") from None
        if value < minimum or (value == minimum and not inclusive):
            raise argparse.ArgumentTypeError(f"must be {'>=' if inclusive else '>'} {minimum:g}, got {text}")
        return value

    return parse


_positive_float = _number(float, 0.0, inclusive=False)
_non_negative_float = _number(float, 0.0)
_positive_int = _number(int, 1)


def build_parser(prog: str = "python -m tuner.sim") -> argparse.ArgumentParser:
    """SGLang's launch flags the tuner uses (dash spellings and aliases as SGLang's), plus ``--sim-*``.

    ``allow_abbrev`` is off so that a misspelt flag is an error rather than a silent prefix match.
    """
    p = argparse.ArgumentParser(
        prog=prog, allow_abbrev=False,
        description="Simulated SGLang server: SGLang's launch flags, HTTP API and failure modes, "
                    "timed by a performance model (no GPU).",
    )
    g = p.add_argument_group("SGLang server arguments")
    g.add_argument("--model-path", "--model", dest="model_path", required=True,
                   help="Model name or path (only reported; the simulator loads no weights).")
    g.add_argument("--tokenizer-path", default=None)
    g.add_argument("--served-model-name", default=None)
    g.add_argument("--tp-size", "--tp", "--tensor-parallel-size", dest="tp_size", type=int, default=1)
    g.add_argument("--host", default="127.0.0.1")
    g.add_argument("--port", type=int, default=30000)
    g.add_argument("--speculative-algorithm", default=None)
    g.add_argument("--speculative-draft-model-path", "--speculative-draft-model",
                   dest="speculative_draft_model_path", default=None)
    g.add_argument("--speculative-num-steps", type=int, default=None)
    g.add_argument("--speculative-eagle-topk", type=int, default=None)
    g.add_argument("--speculative-num-draft-tokens", type=int, default=None)
    g.add_argument("--speculative-use-rejection-sampling", action="store_true")
    g.add_argument("--speculative-adaptive", action="store_true")
    g.add_argument("--speculative-adaptive-config", default=None)
    g.add_argument("--max-running-requests", type=int, default=None)
    g.add_argument("--cuda-graph-max-bs-decode", type=int, default=None)
    g.add_argument("--cuda-graph-max-bs", type=int, default=None,
                   help="The pre-0.5.23 name of --cuda-graph-max-bs-decode.")
    g.add_argument("--mem-fraction-static", type=float, default=None)
    g.add_argument("--context-length", type=int, default=None)
    g.add_argument("--attention-backend", choices=ATTENTION_BACKENDS, default=None)
    g.add_argument("--page-size", type=int, default=None)
    g.add_argument("--enable-metrics", action="store_true")
    g.add_argument("--stream-interval", type=_positive_int, default=1)
    g.add_argument("--trust-remote-code", action="store_true")
    g.add_argument("--log-level", default="info",
                   choices=("debug", "info", "warning", "error", "critical"))
    g.add_argument("--config", default=None, metavar="FILE",
                   help="Flat YAML mapping of server arguments (dash keys), merged under the command line.")
    s = p.add_argument_group("simulator arguments")
    s.add_argument("--sim-profile", default=DEFAULT_PROFILE, metavar="NAME|FILE",
                   help="Performance-model profile: a bundled name or a YAML file (default: %(default)s).")
    s.add_argument("--sim-speedup", type=_positive_float, default=1.0, metavar="X",
                   help="Wall clock runs X times faster than model time (default: %(default)s).")
    s.add_argument("--sim-load-seconds", type=_non_negative_float, default=1.0, metavar="S",
                   help="Simulated model loading, wall seconds, before the server is ready.")
    s.add_argument("--sim-noise", type=_non_negative_float, default=None, metavar="R",
                   help="Relative jitter of step times (default: the profile's).")
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
    front: list[str] = []
    for key, value in _config_entries(path).items():
        flag = f"--{key}"  # as written: underscore keys stay underscored and argparse rejects them
        if isinstance(value, bool):
            if str(key).replace("-", "_") in store_true:
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


# --------------------------------------------------------------------------------------------------
# Resolution: tuner.sglang.rules applied the way SGLang's speculative_hook.py applies them


_EXCEPTIONS = {
    "AssertionError": AssertionError, "TypeError": TypeError,
    "ValueError": ValueError, "RuntimeError": RuntimeError,
}


@dataclass(frozen=True)
class LaunchPlan:
    """What the simulated server runs after SGLang's argument handling.

    ``server_args`` are SGLang's server arguments with their resolved values (underscore names, as
    ``/server_info`` reports them). ``spec`` is the effective speculative setting, ``None`` for
    autoregressive decoding. ``runtime_violation`` is a broken rule SGLang only hits at the first
    speculative request (the server starts, then fails those requests).
    """

    server_args: dict
    spec: SpecConfig | None
    runtime_violation: RuleViolation | None
    max_running_requests: int | None

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


def _handle_eagle_family(ns: argparse.Namespace, log: logging.Logger):
    """speculative_hook.py ``_handle_eagle_family``: the 48 reset first, then the flag checks."""
    # Imported here: tuner.config.space loads the study-file schemas (pydantic), ~0.2 s of start-up that an
    # autoregressive server does not need.
    from ..config.space import context_from_args

    server_args = vars(ns)
    mrr, warning = resolve_max_running_requests(ns.max_running_requests, speculative=True)
    if warning:
        log.warning(warning)
    requested = SpecConfig(ns.speculative_num_steps, ns.speculative_eagle_topk,
                           ns.speculative_num_draft_tokens)
    if ns.speculative_adaptive:
        requested = _adaptive(ns, requested, log)
    res = resolve(requested, context_from_args(ns.speculative_algorithm, server_args))
    for line in res.warnings:
        log.warning(line)
    if res.violation is not None and res.violation.at_launch:
        _raise_sglang(res.violation)
    return res.effective, res.violation, mrr


def _adaptive(ns: argparse.Namespace, requested: SpecConfig, log: logging.Logger) -> SpecConfig:
    """SGLang's --speculative-adaptive checks (tuner.sglang.rules). The simulator then runs the resolved
    num_steps for every batch size: it does not model SGLang's per-batch-size step changes."""
    import json

    if ns.speculative_adaptive_config is None:
        raise ValueError("the simulated server needs --speculative-adaptive-config FILE with "
                         "--speculative-adaptive (SGLang's built-in default table is not modelled)")
    with open(ns.speculative_adaptive_config) as f:
        candidates = adaptive_candidate_steps(json.load(f))
    spec, warning = resolve_adaptive(requested, candidates)
    if warning:
        log.warning(warning)
        ns.speculative_adaptive = False
    else:
        log.warning("simulator: adaptive steps by batch size are not simulated; every batch runs "
                    "num_steps=%d", spec.num_steps)
    return spec


def resolve_launch(ns: argparse.Namespace, log: logging.Logger) -> LaunchPlan:
    """Apply SGLang's argument handling. Logs SGLang's warnings; raises SGLang's exception for a
    setting it refuses at launch (``AssertionError``, ``TypeError``, ``ValueError``)."""
    algorithm = ns.speculative_algorithm
    spec = violation = None
    mrr = ns.max_running_requests
    if algorithm is not None:
        if algorithm.upper() not in EAGLE_ALGORITHMS:
            raise ValueError(
                f"The simulated server implements --speculative-algorithm "
                f"{', '.join(EAGLE_ALGORITHMS)} only, got {algorithm!r}."
            )
        spec, violation, mrr = _handle_eagle_family(ns, log)
    args = {k: v for k, v in vars(ns).items() if k not in SIM_ARGS and k != "config"}
    args["page_size"] = ns.page_size or 1
    # SGLang 0.5.23 folds the older flag into --cuda-graph-max-bs-decode; both names report the
    # value in force so a config exported under either name restarts the same server.
    graph_bs = ns.cuda_graph_max_bs_decode or ns.cuda_graph_max_bs
    args["cuda_graph_max_bs"] = args["cuda_graph_max_bs_decode"] = graph_bs
    args["max_running_requests"] = mrr
    args["served_model_name"] = ns.served_model_name or ns.model_path
    args["tokenizer_path"] = ns.tokenizer_path or ns.model_path
    if spec is not None:
        args.update(spec.server_args())
    return LaunchPlan(server_args=args, spec=spec, runtime_violation=violation,
                      max_running_requests=mrr)
