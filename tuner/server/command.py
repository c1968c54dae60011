"""The server command line a trial runs: ``python -m sglang.launch_server ...`` or, for the simulator,
``python -m tuner.sim ...`` with the very same flags plus ``--sim-*``.

One function builds it (:func:`plan_launch`; :func:`build_argv` is its argv), so the study's dry run,
``tuner launch --print`` and the real launch can never disagree.

Pins. Some server arguments SGLang chooses by itself, differently for the baseline and for each
speculative setting, which would bias the comparison the study makes. Unless the study sets them, the
launcher pins them to the same value for the baseline and every trial:

* ``--max-running-requests`` = the largest benchmark concurrency (times the attention-DP workers, each
  of which runs ``max(1, N // attn_dp_size)``): with speculative decoding on and the flag unset, SGLang
  lowers it to 48 (``speculative_hook.py``, ``_handle_eagle_family``), while the baseline derives it
  from memory.
* ``--cuda-graph-max-bs-decode`` = the largest benchmark concurrency, so no measured batch runs eager
  in one trial and graphed in the next (SGLang 0.5.23 names it so, ``arg_groups/fields/exec_.py``;
  older releases call it ``--cuda-graph-max-bs``: set that one in ``server.args`` to use it instead).
* ``--attention-backend`` = the study's :class:`tuner.sglang.attention.AttentionChoice`, chosen per
  model and GPU (:mod:`tuner.engine.facts`): SGLang's automatic choice depends on topk
  (``model_override_base.py``, ``get_default_attn_backend``: FA3 on Hopper for MHA chains,
  FlashInfer for MHA trees) and some of its choices cannot run trees (``trtllm_mla`` for MLA on
  SM100), so the pin is SGLang's own choice where that runs trees, else a backend that does. A
  launch planned without a decision (a study created before it was stored) pins
  :data:`DEFAULT_ATTENTION_BACKEND`.

A value the study sets wins; one below the largest concurrency is kept and warned about.
"""

from __future__ import annotations

import logging
import re
import shlex
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from ..config.server_arg_checks import reserved_arg
from ..config.study import ServerSettings, StudyConfig, objective_concurrency
from ..config.yamlfile import ConfigError
from ..sglang.attention import AttentionChoice
from ..sglang.parallel import data_parallel_layout
from ..sglang.rules import SpecConfig, flag_name
from .caps import caps_below
from ..sglang.server_args import server_args_table

log = logging.getLogger("tuner.server")

#: The attention backend pinned when no decision was made (no model facts): FlashInfer runs on every
#: NVIDIA generation and implements MHA trees and paged trees (``_PAGE_TREE_SPEC_BACKENDS``).
DEFAULT_ATTENTION_BACKEND = "flashinfer"

#: The argument capping CUDA-graph decode batches. SGLang 0.5.23 names it
#: ``cuda_graph_max_bs_decode`` (``arg_groups/fields/exec_.py``); the older ``--cuda-graph-max-bs`` is
#: gone there (and, as a prefix of two flags, an argparse error). The simulator takes both names, so
#: both backends get the same command line.
CUDA_GRAPH_MAX_BS_ARG = "cuda_graph_max_bs_decode"

# Arguments that, when the study gives any of them, mean the user chose the thing a pin would choose.
_USER_CUDA_GRAPH = ("cuda_graph_max_bs", "cuda_graph_max_bs_decode", "cuda_graph_config",
                    "cuda_graph_bs_decode", "cuda_graph_bs", "disable_cuda_graph",
                    "disable_decode_cuda_graph")
_USER_ATTENTION = ("attention_backend", "decode_attention_backend", "prefill_attention_backend")

SGLANG_MODULE = "sglang.launch_server"
SIM_MODULE = "tuner.sim"


@dataclass(frozen=True)
class LaunchPlan:
    """Everything about one launch that is decided before a process exists.

    ``server_args`` are the server arguments the command sets (underscore names, pins included),
    the same dict to build :class:`tuner.sglang.rules.ServerContext` from so rules and launch agree.
    """

    argv: list[str]
    host: str
    port: int
    server_args: dict[str, Any]
    pinned: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    attention: AttentionChoice | None = None  #: the study's attention decision, and why

    @property
    def command_line(self) -> str:
        return format_command(self.argv)

    @property
    def url(self) -> str:
        return server_url(self.host, self.port)


def format_command(argv: Iterable[str]) -> str:
    """The argv as one line a POSIX shell splits back into exactly these words (what ``--print`` and
    ``export --print-command`` show): :func:`shlex.quote`'s, but a word holding a character that is
    not printable (a line break, ESC, U+2028) in ANSI-C quotes (:func:`ansi_c_word`). QA (qa200):
    ``shlex.join`` sent a value's ESC to the terminal as a control sequence, and a line break split
    the printed command over two lines. Printable non-ASCII (``\u4ee3``, the character) stays as it reads."""
    return " ".join(shlex.quote(w) if w.isprintable() else ansi_c_word(w) for w in argv)


def ansi_c_word(word: str) -> str:
    """``word`` as one shell word: :func:`shlex.quote`'s when it is printable ASCII, else bash's ANSI-C
    quotes (``$'a\\nb'``, ``$'\\u4ee3'``), every character outside printable ASCII escaped, so the
    line it stands in is printable ASCII (an export's header comment)."""
    if word.isascii() and word.isprintable():
        return shlex.quote(word)
    out = []
    for ch in word:
        if ch in "\\'":
            out.append("\\" + ch)
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) < 0x80:  # a control character: \xHH (bash reads at most two hex digits)
            out.append(f"\\x{ord(ch):02x}")
        else:  # the character, not its bytes: \u/\U (bash's \xe9 would be the byte 0xE9)
            out.append(f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
    return "$'" + "".join(out) + "'"


def server_url(host: str, port: int) -> str:
    """The base URL to reach a server bound to ``host`` (a wildcard bind is reached on loopback)."""
    if host in ("0.0.0.0", ""):
        host = "127.0.0.1"
    elif host == "::":
        host = "::1"
    if ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}"


def _flags_in(extra_args: list[str]) -> set[str]:
    """Underscore names of the ``--flags`` in raw argv (``--a-b=1`` and ``--a-b 1`` alike), each
    also as the argument SGLang's parser reads it as (``--max-running 8`` is max_running_requests:
    argparse takes a unique prefix), so the launcher's pins see what the study set."""
    names = set()
    for a in extra_args:
        if a.startswith("--"):
            flag = a.split("=", 1)[0]
            names.add(flag[2:].replace("-", "_"))
            option = server_args_table().option_for_flag(flag)
            if option is not None:
                names.add(option.dest)
    return names


#: The flags in raw argv (``server.extra_args``), each as SGLang reads it (see :func:`_flags_in`).
flags_in = _flags_in


def merged_server_args(server: ServerSettings, fixed_args: Mapping[str, Any] | None) -> dict[str, Any]:
    """The search space's fixed args with the study's ``server.args`` (underscore names).

    Raises :class:`ConfigError` when both set one argument to different values, or either sets an
    argument the launcher owns (model path, port, the speculative flags, ...), or ``server.extra_args``
    gives an argument either sets (under any of its spellings: an alias, an abbreviation, ``--no-``).
    """
    merged: dict[str, Any] = {}
    source: dict[str, str] = {}  #: argument -> where it was set
    for where, args in (("search space fixed", dict(fixed_args or {})), ("server.args", server.args)):
        for name, value in args.items():
            key = f"{'fixed' if where.startswith('search') else 'server.args'}.{name}"
            # The study file's own sections are checked when it loads (tuner.config.space); this
            # guards fixed args handed in by code.
            if reserved_arg(name) is not None:
                raise ConfigError("study", key, f"{name} is set by the tuner (use the server section's "
                                  f"own keys or the search space); remove it here")
            if name in merged and merged[name] != value:
                raise ConfigError("study", key, f"{value!r} conflicts with the search space's fixed "
                                  f"{name}: {merged[name]!r}; set it in one place")
            merged[name] = value
            source[name] = "server.args" if where == "server.args" else "the search space's fixed args"
    # server.extra_args goes last on the command line, where argparse lets the last value win: one
    # of them setting what server.args or fixed sets would run the server on its value while the
    # study records (and the rules judge) the other (QA: max_running_requests 7 with --max-running 8)
    for token in server.extra_args:
        option = server_args_table().option_for_flag(token.split("=", 1)[0]) if token.startswith("--") else None
        if option is not None and option.dest in merged:
            raise ConfigError("study", "server.extra_args", (
                f"{token} sets {option.dest}, which {source[option.dest]} sets too "
                f"({option.dest}: {merged[option.dest]!r}); the server would run the last one given and the "
                f"study record the other: set it in one place"))
    return merged


def pin_server_args(server: ServerSettings, fixed_args: Mapping[str, Any] | None,
                    max_concurrency: int, attention: AttentionChoice | None = None
                    ) -> tuple[dict[str, Any], dict[str, Any], list[str]]:
    """``(server_args, pinned, warnings)``: the study's server args plus the pins it did not set.
    ``attention``: the study's decision (its backend is pinned when ``attention.pinned``)."""
    if max_concurrency < 1:
        raise ValueError(f"max_concurrency must be at least 1, got {max_concurrency}")
    args = merged_server_args(server, fixed_args)
    user = set(args) | _flags_in(server.extra_args)
    pinned: dict[str, Any] = {}
    warnings: list[str] = []
    if not user & set(_USER_CUDA_GRAPH):
        pinned[CUDA_GRAPH_MAX_BS_ARG] = max_concurrency
    attn_dp = _attention_dp_size(server, args)
    if "max_running_requests" not in user:
        # each attention-DP worker sizes its pool for max(1, N // attn_dp_size) requests and the
        # dispatcher (round robin) does not route by load: every worker may hold the top level whole
        # (QA: N = 12 on 8 attention-DP workers ran 8 at once, the top level queued)
        pinned["max_running_requests"] = max_concurrency * attn_dp
    if not user & set(_USER_ATTENTION):
        if attention is None:
            pinned["attention_backend"] = DEFAULT_ATTENTION_BACKEND
        elif attention.pinned and attention.backend:
            pinned["attention_backend"] = attention.backend
    # what the server runs: server.extra_args' value too (it sets the attention-DP width above as
    # well), and a number given as text ("12": SGLang's argparse reads it as 12). QA (qa152):
    # extra_args [--attn-dp-size, 8, --max-running-requests, 12] ran 8 at once under a top level of
    # 12, unwarned, as did server.args max_running_requests: "12".
    warnings += caps_below(server.with_extra_args(args), attn_dp, max_concurrency)
    return {**args, **pinned}, pinned, warnings


def _attention_dp_size(server: ServerSettings, args: Mapping[str, Any]) -> int:
    """The attention-DP workers a launch of ``server`` with ``args`` (the study's own, fixed ones
    included) runs, what ``server.extra_args`` sets counted too; 1 for a layout SGLang refuses (the
    study file's check says so when it loads)."""
    try:
        layout = data_parallel_layout(server.with_extra_args(args), server.tp_size)
    except (TypeError, ValueError):
        return 1
    return layout.attn_dp_size if layout.error is None else 1


def arg_tokens(name: str, value: Any) -> list[str]:
    """One server argument as argv: bools as bare flags when true (a ``--flag/--no-flag`` switch of
    SGLang's, argparse's BooleanOptionalAction, as ``--no-flag`` when false: leaving it out would
    keep SGLang's default, which may be true), lists as repeated values."""
    flag = flag_name(name)
    if isinstance(value, bool):
        if is_switch_pair(name):
            return [flag if value else "--no-" + flag[2:]]
        return [flag] if value else []
    if isinstance(value, (list, tuple)):
        return [flag, *(_scalar(v) for v in value)] if value else []
    return [flag, _scalar(value)]


def is_switch_pair(name: str) -> bool:
    """Whether server argument ``name`` is one of SGLang 0.5.23's ``--flag/--no-flag`` switches
    (``server_args_0_5_23.json``: action ``boolean_optional``)."""
    option = server_args_table().option_named(name)
    return option is not None and option.action == "boolean_optional"


def config_refused(name: str) -> str | None:
    """SGLang's action class when its ``--config`` loader refuses server argument ``name`` in a YAML
    (``Unsupported config option '...' with action '...'``: the switches, the deprecated
    ``--disable-cuda-graph`` and ``--enable-dp-attention``, ``--lora-paths``); None when it loads."""
    option = server_args_table().option_named(name)
    return option.config_refused if option is not None else None


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def plan_launch(server: ServerSettings, spec: SpecConfig | None, *, algorithm: str = "EAGLE3",
                fixed_args: Mapping[str, Any] | None = None, port: int | None = None,
                max_concurrency: int = 1, attention: AttentionChoice | None = None,
                log_warnings: bool = True) -> LaunchPlan:
    """Decide the whole command for one launch; ``spec=None`` is the autoregressive baseline.

    ``port`` overrides ``server.port`` (the launcher passes the free port it picked for port 0).
    The baseline gets the same pins and server args as every trial, and no speculative flag.
    Raises :class:`ConfigError` for a study that cannot be launched (see :func:`merged_server_args`;
    a speculative launch without ``server.draft_model_path``). ``log_warnings=False``: the plan's
    warnings are only in :attr:`LaunchPlan.warnings` (a check that launches nothing).
    """
    port = server.port if port is None else port
    server_args, pinned, warnings = pin_server_args(server, fixed_args, max_concurrency, attention)
    for line in warnings if log_warnings else ():
        log.warning("%s", line)
    module = SGLANG_MODULE if server.backend == "sglang" else SIM_MODULE
    argv = [server.python or sys.executable, "-m", module, "--model-path", server.model_path,
            "--tp-size", str(server.tp_size), "--host", server.host, "--port", str(port)]
    if spec is not None:
        if not server.draft_model_path:
            raise ConfigError("study", "server.draft_model_path",
                              f"required for {algorithm} trials: the path of the draft model")
        argv += ["--speculative-algorithm", algorithm,
                 "--speculative-draft-model-path", server.draft_model_path]
        for name, value in spec.server_args().items():
            argv += [flag_name(name), str(value)]
    for name, value in server_args.items():
        argv += arg_tokens(name, value)
    if server.backend == "sim":
        sim = server.sim
        argv += ["--sim-profile", sim.profile, "--sim-speedup", _scalar(sim.speedup),
                 "--sim-load-seconds", _scalar(sim.load_seconds), "--sim-noise", _scalar(sim.noise)]
        if sim.seed is not None:
            argv += ["--sim-seed", str(sim.seed)]
    argv += list(server.extra_args)
    return LaunchPlan(argv, server.host, port, server_args, pinned, warnings, attention)


def build_argv(server: ServerSettings, spec: SpecConfig | None, *, algorithm: str = "EAGLE3",
               fixed_args: Mapping[str, Any] | None = None, port: int,
               max_concurrency: int, attention: AttentionChoice | None = None) -> list[str]:
    """The exact argv of one launch (see :func:`plan_launch`), its warnings unlogged: a dry run or a
    check builds many, each warned the same (QA, qa226: `tuner doctor` printed one cap warning 11
    times, bare, before its checks); :attr:`LaunchPlan.warnings` says them once where they are shown."""
    return plan_launch(server, spec, algorithm=algorithm, fixed_args=fixed_args, port=port,
                       max_concurrency=max_concurrency, attention=attention, log_warnings=False).argv


def study_max_concurrency(study: StudyConfig) -> int:
    """The largest concurrency the study measures: its suite's sweep and its objectives.

    The pins use it; the study run and ``tuner launch`` both call this so they build one command.
    """
    from ..config.suite import load_suite  # the suite loader belongs to the benchmark layer

    suite = load_suite(study.bench.suite)
    levels = [int(c) for c in suite.sweep.concurrencies]
    levels += [c for c in map(objective_concurrency, study.objectives) if c]
    return max(levels or [1])


# argparse's closing line (Lib/argparse.py, ArgumentParser.error: "PROG: error: MESSAGE", exit 2) for
# a flag the parser does not have: "unrecognized arguments: --x 1" (parse_args, the words left over)
# and "ambiguous option: --x could match --x-a, --x-b" (_parse_optional, a prefix of two flags)
_FLAG_REFUSED = re.compile(r"^\S[^\n]*: error: (unrecognized arguments|ambiguous option): ([^\n]*)$", re.M)
#: The flags the tuner itself writes at every launch (the speculative ones at every trial).
_TUNER_FLAGS = {"--model-path", "--tp-size", "--host", "--port", "--speculative-algorithm",
                "--speculative-draft-model-path", "--speculative-num-steps", "--speculative-eagle-topk",
                "--speculative-num-draft-tokens"}


@dataclass(frozen=True)
class RefusedFlags:
    """Flags of a launch's command line that the server's argument parser does not have (a release
    other than the one the tuner writes for: renamed, dropped, or not yet there): no setting of the
    study's can launch, whatever its values (:func:`refused_flags`)."""

    flags: list[str]
    line: str  #: argparse's own line (``sglang serve: error: unrecognized arguments: ...``)
    key: str  #: the study key that wrote them: server.python (the tuner's own), server.args, server.extra_args
    from_tuner: bool  #: one of them is written by the tuner itself (its flags, its pins)
    pins: list[str] = field(default_factory=list)  #: those of them the tuner pins (``--flag value``)


def refused_flags(log_text: str, argv: list[str], plan: LaunchPlan | None) -> RefusedFlags | None:
    """The flags of ``argv`` that the log's last argparse error (``unrecognized arguments``, or
    ``ambiguous option``) refuses, and the study key that wrote them; None when the log has no such
    line, or it names no flag of ``argv``. ``plan``: the launch's plan (None: a ready-made command,
    every flag the tuner's). Read only for a server that exited with argparse's status 2."""
    found = _FLAG_REFUSED.findall(log_text)
    if not found:
        return None
    kind, rest = found[-1]
    words = rest.split()
    named = words[:1] if kind == "ambiguous option" else [w for w in words if w.startswith("--")]
    flags = [w.split("=", 1)[0] for w in named]
    given = {w.split("=", 1)[0] for w in argv if w.startswith("--")}
    flags = [f for f in flags if f in given]
    if not flags:
        return None
    line = next(ln.strip() for ln in reversed(log_text.splitlines()) if f": error: {kind}: " in ln)
    keys, pins = [], []
    for flag in flags:
        dest = flag[2:].replace("-", "_")
        if plan is not None and dest in plan.pinned and flag not in _TUNER_FLAGS:
            keys.append("server.python")
            pins.append(f"{flag} {_scalar(plan.pinned[dest])}")
        elif plan is None or flag in _TUNER_FLAGS:
            keys.append("server.python")
        elif dest in plan.server_args:
            keys.append("server.args")
        else:
            keys.append("server.extra_args")
    key = "server.python" if "server.python" in keys else keys[0]
    return RefusedFlags(flags, line[:300], key, key == "server.python", pins)

