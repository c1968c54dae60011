"""Export a measured setting as the server config SGLang loads: ``python -m sglang.launch_server
--config best.yaml``.

The file is a flat YAML mapping of SGLang server arguments, with keys spelled with dashes (SGLang
0.5.x's ``--config`` loader, ``srt/utils/server_args_config_parser.py``, turns each key into
``--KEY`` as written, so ``tp_size`` would become the unknown flag ``--tp_size``) and booleans as
``true``/``false`` (``true`` becomes a bare flag, ``false`` is dropped). Provenance goes in comments
at the top: study, trial, measured figures against the baseline, date, SGLang version, hardware.

The server arguments come from the launcher's own :func:`tuner.server.command.plan_launch` -- model,
TP size, the speculative flags (the EFFECTIVE setting, what SGLang really ran), the search space's
fixed args, the study's ``server.args`` and the launcher's pins -- so export and launch can never
disagree. Host and port are left out: deployment choices. ``server.extra_args`` (raw argv) cannot
be told apart into keys and values reliably: they are named in a comment and in the command line.

After ``tuner study confirm``, ``--pick single|throughput|knee`` uses the confirmed picks
(:mod:`tuner.results.confirmed`): confirmed means with 95% intervals, ties within noise to the
cheaper setting, and per concurrency whether the gain is distinguishable from the baseline; a study
whose confirmed candidates all lose to ``--min-speedup-c32`` beyond noise answers "no safe
improvement" (:class:`PickError`). The header also states the workload (suite, dataset, API,
temperature), the latency SLOs met or broken (and whether the baseline breaks them itself) and the
lossless check.

Why one module of over 400 lines: an export is one pipeline, the pick, its server arguments, the
provenance header with its warnings, and the files written, each step reading the one before;
split, every step would pass the whole study state on to the next.

Contract: building an export reads storage only; :func:`tuner.config.files.write_atomic` writes each file to a
temporary file in the target folder and renames it, only after every check has passed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import yaml

from .. import __version__
from ..config.wording import counted
from ..config.yamlfile import ConfigError
from ..engine.records import TrialRecord, load_records
from ..sglang.rules import SpecConfig
from .adaptive import AdaptivePolicy, topk1_measurements
from .confirmed import confirmation_lines, confirmed_pick, load_confirmation
from .losing_pick import slower_than_baseline
from .pareto import (PICKS, PickError, check_c32_swept, check_pick, pick_record, refused_now, repeats_mean,
                     study_front)
from .traffic import baseline_slo_lines, lossless_line, slo_lines, workload_lines

#: The flags the launcher puts first, in its order; host and port are deployment choices.
_HEAD = ("model_path", "tp_size")
_DEPLOYMENT = ("--host", "--port")


@dataclass
class ServerExport:
    """One exported server: the YAML mapping, the equivalent command line and the provenance."""

    study: str
    pick: str
    record: TrialRecord
    spec: SpecConfig
    server_args: dict[str, Any]  #: dash keys, in launch order: the YAML mapping
    argv: list[str]  #: ``python -m sglang.launch_server ...`` without host and port
    header: list[str]  #: provenance comment lines (without the leading ``# ``)
    provenance: dict[str, Any]
    warnings: list[str] = field(default_factory=list)

    @property
    def command_line(self) -> str:
        """The argv as one line a POSIX shell splits back into exactly these words (``--print-command``,
        the JSON's ``command``), as :func:`tuner.server.command.format_command` writes it: a word that is
        not printable (a line break, ESC, U+2028) in ANSI-C quotes, as in the header:
        printed raw, ESC reached the terminal as a control sequence and a line break split the line
        (QA, qa200: ``weight_version: "a\\x1bb"``). Printable non-ASCII (``\\u4ee3``, the character) stays
        as it reads."""
        from ..server.command import format_command

        return format_command(self.argv)

    def yaml_text(self) -> str:
        """The config file: the header as comments, then the flat mapping. ASCII only: SGLang opens a
        ``--config`` file with a plain ``open(file_path)`` (``srt/utils/server_args_config_parser.py``,
        ConfigArgumentMerger), in the locale's encoding, so one UTF-8 byte fails its load under a
        non-UTF-8 locale (``LC_ALL=C``). Values are YAML escapes (``safe_dump``'s default, no
        ``allow_unicode``); comment text is Python's (``\\u4ee3``), readable and never a value."""
        head = "".join(f"# {_ascii(line)}\n" if line else "#\n" for line in self.header)  # one line each: build_export
        body = yaml.safe_dump(self.server_args, sort_keys=False, default_flow_style=False, width=1000)
        return head + body

    def json_text(self) -> str:
        return json.dumps({
            "study": self.study, "pick": self.pick, "trial": self.record.number,
            "effective": self.spec.as_dict(), "server_args": self.server_args,
            "command": self.command_line, "argv": self.argv,
            "provenance": self.provenance, "warnings": self.warnings,
        }, indent=2) + "\n"


def _one_line(text: str) -> str:
    """``text`` as one comment line: every character a YAML (or Python) reader takes as a line
    break -- a newline, a return, U+0085, U+2028, U+2029 -- becomes a space, so no text a study holds
    (a suite's name, an environment variable's) can end the comment and start a key of the config."""
    return " ".join(text.splitlines()) if text else text


def _ascii(text: str) -> str:
    """``text`` with every character but printable ASCII as its Python escape (``代`` -> ``\\u4ee3``,
    ``é`` -> ``\\xe9``, ESC -> ``\\x1b``): a comment line of the export (see :meth:`Export.yaml_text`).
    An ASCII control character is escaped too: PyYAML's reader, which SGLang's ``--config`` loader
    runs (``yaml.safe_load``), refuses the whole file on one (a C0 control but the tab and line
    breaks, or DEL) anywhere in it, a comment included (``unacceptable character #x001b: special
    characters are not allowed``; QA: a ``server.env`` name or the study's folder holding ESC reached
    the header raw); the tab is escaped alike, to keep the line as the study's text reads."""
    text = text.encode("ascii", "backslashreplace").decode("ascii")
    return "".join(ch if " " <= ch <= "~" else f"\\x{ord(ch):02x}" for ch in text)


def shell_words(words) -> str:
    """``words`` as one line a POSIX shell (bash, zsh) splits back into exactly these argv words,
    for the header's "add them to the command line" (the launch hands ``server.extra_args`` to SGLang
    as argv words; QA: they were joined with spaces, so ``--json-model-override-args '{"a": 1}'``
    read back as three words). A word holding a line break, another control character or non-ASCII
    is written in ANSI-C quotes (``$'a\\nb'``, ``$'\\u4ee3'``): the header is one ASCII comment line
    (:func:`_one_line`, :func:`_ascii`), which would otherwise turn a newline into a space and ``代`` into
    the literal text ``\\u4ee3``; every other word is :func:`shlex.quote`'s."""
    from ..server.command import ansi_c_word

    return " ".join(map(ansi_c_word, words))


def dash_key(name: str) -> str:
    """A server argument as SGLang's ``--config`` loader wants the key: ``tp_size`` -> ``tp-size``;
    the loader turns the key into ``--KEY`` as written, so an argument SGLang spells otherwise than
    its name is keyed by its flag (``fp8_gemm_runner_backend`` -> ``fp8-gemm-backend``:
    :func:`tuner.sglang.rules.flag_name`)."""
    from ..sglang.rules import flag_name

    return flag_name(name)[2:]


def _arg_name(key: str) -> str:
    """The server argument (SGLang's ``dest``, as ``/server_info`` names it) of an exported key."""
    from ..sglang.server_args import server_args_table

    option = server_args_table().option_for_flag("--" + key)
    return option.dest if option is not None else key.replace("-", "_")


def _max_concurrency(suite: dict, objectives: Sequence[str]) -> int:
    # The same figure the study's launches pinned with (tuner.server.command.study_max_concurrency),
    # read from the suite stored in the study so the export needs no local suite file.
    from ..config.study import objective_concurrency

    levels = [int(c) for c in (suite.get("sweep") or {}).get("concurrencies") or []]
    levels += [c for c in map(objective_concurrency, objectives) if c]
    return max(levels or [1])


def _strip_deployment(argv: list[str]) -> list[str]:
    """The launcher's argv without ``--host H --port P`` (the first of each: the launcher's own)."""
    out, dropped = [], set()
    i = 0
    while i < len(argv):
        if argv[i] in _DEPLOYMENT and argv[i] not in dropped:
            dropped.add(argv[i])
            i += 2
            continue
        out.append(argv[i])
        i += 1
    return out


def server_mapping(config, space, suite: dict, spec: SpecConfig,
                   extra_args: dict[str, Any] | None = None) -> tuple[dict[str, Any], list[str], Any]:
    """``(dash-key mapping, argv, LaunchPlan)`` of an SGLang launch of ``spec`` for the study.

    ``extra_args`` (underscore names) are added as fixed args, e.g. the adaptive flags.
    Raises :class:`ConfigError` when the study cannot be launched (see ``plan_launch``).
    """
    from ..server.command import arg_tokens, config_refused, plan_launch

    server = config.server
    python = server.python if server.backend == "sglang" and server.python else "python"
    deploy = server.model_copy(update={"backend": "sglang", "python": python})
    fixed = {**space.config.fixed, **(extra_args or {})}
    plan = plan_launch(deploy, spec, algorithm=space.config.algorithm, fixed_args=fixed,
                       port=server.port, max_concurrency=_max_concurrency(suite, config.objectives),
                       attention=space.attention)
    mapping: dict[str, Any] = {
        "model-path": server.model_path,
        "tp-size": server.tp_size,
        "speculative-algorithm": space.config.algorithm,
        "speculative-draft-model-path": server.draft_model_path,
    }
    for name, value in spec.server_args().items():
        mapping[dash_key(name)] = value
    for name, value in plan.server_args.items():
        if config_refused(name):
            continue  # SGLang's --config loader refuses the key: build_export says so
        if not arg_tokens(name, value):
            # what the launch leaves off its command line (a false store_true: SGLang's default) the
            # file leaves out too: 0.5.23's loader skips such a key, but 0.5.22's (utils/
            # server_args_config_parser.py, _add_boolean_arg) skips only the store_true flags it has,
            # and turns any other into "--KEY false", which its argparse refuses (QA:
            # enable-http-worker-reuseport: false, a 0.5.23 flag, stopped 0.5.22 at launch)
            continue
        mapping[dash_key(name)] = _as_held(name, value)
    return mapping, _strip_deployment(plan.argv), plan


def _as_held(name: str, value: Any) -> Any:
    """A number written as text (``mem_fraction_static: "0.8"``) as the number SGLang holds, else
    ``value``. SGLang 0.5.23's ``--config`` loader (``srt/utils/server_args_config_parser.py``,
    ``_add_scalar_arg``) hands ``str(value)`` to argparse, which converts it by the option's type, so
    ``'0.8'`` and ``0.8`` load alike (run on CPU with its real parser); the file then shows the value
    SGLang runs with, as the study check reads it (QA: it was exported quoted, ``'0.8'``). Kept as
    written where the number's own text would not load back (``"-0.00001"`` is ``-1e-05``, which
    argparse reads as an option) or does not parse (a stored study from before the check). A list's
    items alike: the loader hands argparse ``str(item)`` for each (``_add_list_arg``; QA, qa200:
    ``cuda_graph_bs_decode: [1, 2, "4"]`` was exported with ``- '4'`` quoted)."""
    from ..sglang.server_args import server_args_table

    if isinstance(value, list):
        return [_as_held(name, item) for item in value]
    table = server_args_table()
    option = table.option_named(name)
    if not isinstance(value, str) or option is None or option.type not in ("int", "float"):
        return value
    try:
        number = int(value) if option.type == "int" else float(value)
    except ValueError:
        return value
    return value if table.reads_as_option(str(number)) else number


def _fmt(v: float | None, unit: str = "") -> str:
    return "n/a" if v is None else f"{v:.1f}{unit}"


def _ratio(a: float | None, b: float | None) -> str:
    return "n/a" if not a or not b else f"{a / b:.2f}x"


def _hardware(config, record: TrialRecord) -> tuple[str, bool]:
    """(hardware line, figures in model time?)."""
    server = config.server
    if server.backend == "model":
        m = server.model
        what = f"landscape table {m.landscape}" if m.landscape else f"the simulator's performance model, profile {m.profile}"
        return (f"no server ran (backend model): {what}, {m.noise:.0%} measurement noise; every figure is MODEL "
                f"time, not a measurement", True)
    ran_server = bool(record.attrs.get("log_path") or record.attrs.get("server_args"))
    if server.backend == "sim":
        what = "simulated SGLang server (tuner.sim)" if ran_server else "the simulator's performance model (no server ran)"
        return (f"{what}, profile {server.sim.profile}, tp-size {server.tp_size}; every figure is MODEL time "
                f"(what the modelled hardware would take), not this machine's wall clock", True)
    host = (record.attrs.get("worker") or {}).get("host", "unknown host")
    return f"SGLang on {host}, tp-size {server.tp_size}", False


def provenance(study_name: str, url: str | None, pick: str, record: TrialRecord, spec: SpecConfig,
               baseline: dict | None, config, suite: dict, exported_at: str) -> tuple[list[str], dict]:
    """Provenance comment lines and the same facts as data."""
    from ..engine.storage import redact

    a, b = record.attrs, baseline or {}
    hardware, model_time = _hardware(config, record)
    version = a.get("sglang_version")
    if version and config.server.backend == "sim":
        version = f"{version} (the simulator's emulated release)"
    concurrencies = sorted({int(k.split("@")[1]) for k in list(a) + list(b) if k.startswith("tok_per_s@")})
    unit = " tok/s" + (" (model time)" if model_time else "")
    lines = [
        f"SGLang server config exported by tuner {__version__} on {exported_at}",
        f"study {study_name} ({redact(url) or 'storage not given'}), --pick {pick} -> trial {record.number}",
        f"setting: {spec.label()}" + (f" (requested {record.requested.label()}; SGLang runs it as above)"
                                      if record.requested and record.requested != spec else ""),
        f"measured with suite '{suite.get('name', '?')}', against the autoregressive baseline of the same server:",
        f"  single request: {_fmt(a.get('single_tok_per_s'))} vs {_fmt(b.get('single_tok_per_s'))}{unit} = "
        f"{_ratio(a.get('single_tok_per_s'), b.get('single_tok_per_s'))}",
    ]
    for c in concurrencies:
        lines.append(f"  concurrency {c}: {_fmt(a.get(f'tok_per_s@{c}'))} vs {_fmt(b.get(f'tok_per_s@{c}'))}"
                     f"{unit} = {_ratio(a.get(f'tok_per_s@{c}'), b.get(f'tok_per_s@{c}'))}")
    if a.get("accept_length") is not None:
        lines.append(f"  accept length: {a['accept_length']:.2f} tokens per verify step")
    if a.get("measurements"):
        lines.append(f"  each figure the mean of {counted(a['measurements'], 'measurement')} (trials "
                     f"{', '.join(map(str, a.get('measured_in') or []))}): the sampler measured it again")
    lines += [
        f"measured at: {a.get('finished_at', 'unknown')}",
        f"SGLang version: {version or 'not recorded (no server reported /server_info)'}",
        f"hardware: {hardware}",
    ]
    data = {
        "exported_at": exported_at, "tuner_version": __version__, "study": study_name,
        "storage": redact(url), "trial": record.number, "measured_at": a.get("finished_at"),
        "requested": record.requested.as_dict() if record.requested else None,
        "suite": suite.get("name"), "sglang_version": a.get("sglang_version"), "hardware": hardware,
        "model_time": model_time,
        "figures": {k: v for k, v in a.items() if k in ("single_tok_per_s", "single_speedup", "accept_length")
                    or k.startswith(("tok_per_s@", "speedup@"))},
        "baseline": {k: v for k, v in b.items() if k == "single_tok_per_s" or k.startswith("tok_per_s@")},
    }
    return lines, data


def _recorded_mismatches(record: TrialRecord, mapping: dict[str, Any], added: Sequence[str] = ()) -> list[str]:
    """Exported args that differ from what the trial's server reported in ``/server_info``, except
    ``added``: the arguments the export sets on purpose (the adaptive flags, which no trial ran)."""
    ran = record.attrs.get("server_args") or {}
    out = []
    for key, value in mapping.items():
        name = _arg_name(key)
        if name in added:
            continue
        if name in ran and ran[name] is not None and not _same_value(name, ran[name], value):
            out.append(f"{key}: the trial's server ran {ran[name]!r}, the export sets {value!r}")
    return out


def _same_value(name: str, ran: Any, value: Any) -> bool:
    """Whether the exported ``value`` is what the trial's server reported (``ran``): as text, case
    aside, or as SGLang's argparse reads the text its ``--config`` loader hands it (``str(value)``,
    item by item for a list) through the option's type, the value ``/server_info`` then reports: a
    float option's ``600`` is the ``600.0`` it reports, a list's ``'700'`` the integer ``700``, a token
    count's ``64k`` the 64000 (:func:`tuner.sglang.arg_types.token_count`), a JSON option's text the
    object SGLang parsed (``default_chat_template_kwargs``, ``forward_hooks``, ``cuda_graph_config``).
    QA: ``watchdog_timeout: 600`` was warned as "the trial's server ran 600.0, the export sets 600"."""
    import argparse

    from ..sglang.server_args import server_args_table

    if str(ran).lower() == str(value).lower():
        return True
    option = server_args_table().option(name)
    if option is None:
        return False
    try:
        if isinstance(value, list):
            return isinstance(ran, list) and [_as_read(option.type, v) for v in value] == ran
        return _as_read(option.type, value) == ran
    except (argparse.ArgumentTypeError, ArithmeticError, TypeError, ValueError):  # not as SGLang reads it
        return False


def _as_read(kind: str, value: Any) -> Any:
    """One exported value as SGLang 0.5.23's argparse holds it, by the option's type in its table
    (:mod:`tuner.sglang.server_args`); other types (text) as they are. Raises what the type raises."""
    from ..sglang.arg_types import json_list_type, parse_cuda_graph_config_arg, token_count

    if isinstance(value, bool):
        return value
    readers = {"int": int, "float": float, "human_int": token_count, "json": json.loads,
               "json_list": json_list_type, "cuda_graph_config": parse_cuda_graph_config_arg}
    reader = readers.get(kind)
    if reader is None:
        return value
    return reader(value) if kind == "human_int" else reader(str(value))


def _confirmed_twice(conf, trial: int):
    """Trial ``trial``'s confirmed candidate when the confirmation measured it in two rounds or more
    (its means have an interval), else None."""
    candidate = None if conf is None else conf.candidate(trial)
    return candidate if candidate is not None and candidate.rounds >= 2 else None


def build_export(study, pick: str | None, *, url: str | None = None, min_speedup_c32: float | None = None,
                 policy: AdaptivePolicy | None = None, policy_path: str | None = None,
                 exported_at: str | None = None) -> ServerExport:
    """The server config for ``--pick`` (see :func:`tuner.results.pareto.pick_record`).

    With ``policy`` (written to ``policy_path``) the server runs SGLang's adaptive mode: topk 1,
    ``--speculative-num-steps`` one of the policy's steps (the pick's, which must be a topk-1
    setting among them, or with no pick the policy's starting steps).
    Raises :class:`PickError` (nothing usable in the study) or :class:`ConfigError` (bad request).
    """
    from ..engine.baseline import find_baseline
    from ..engine.study import config_from_study

    exported_at = exported_at or datetime.now(timezone.utc).isoformat(timespec="seconds")
    records = load_records(study)
    # an older study's model facts are read here; a broken config.json is said, not fatal: nothing launches
    unread: list[str] = []
    config, space, suite = config_from_study(study, unreadable=unread.append)
    if pick is None and policy is None:
        raise ConfigError("--pick", "", "give --pick single|throughput|knee|TRIAL")
    check_pick(config.objectives, pick)  # before a confirmation's picks, which fall back
    check_c32_swept(study.study_name, (suite.get("sweep") or {}).get("concurrencies") or [], min_speedup_c32)
    # PickError ("no safe improvement") when every confirmed candidate loses to --min-speedup-c32
    conf = load_confirmation(study, min_speedup_c32 if pick in PICKS else None)
    unconfirmed_rival: list[str] = []
    if pick is not None:
        confirmed = confirmed_pick(conf, pick)
        if confirmed is not None:
            record = next(r for r in records if r.number == confirmed.trial)
            # its setting at the mean of its readings, as an unconfirmed pick's (pareto.pick_record)
            record = repeats_mean(records, record)
            unconfirmed = pick_record(study_front(study), records, pick)
            if unconfirmed.number != record.number:
                conf.why[pick] += (f" (one measurement each picked trial {unconfirmed.number}, "
                                   f"{unconfirmed.effective.label()})")
            if unconfirmed.number != record.number and conf.candidate(unconfirmed.number) is None:
                # measured since the confirmation (the study was extended): its figures were never
                # weighed against the confirmed ones (QA, qa130: after `run --add-trials`, a new best
                # reading was passed over with only the header's parenthesis to say so)
                unconfirmed_rival.append(
                    f"--pick {pick}: trial {unconfirmed.number} ({unconfirmed.effective.label()}) reads best by the "
                    f"study's measurements but was never confirmed (confirmation {conf.run} did not measure it); "
                    f"this keeps the confirmed trial {record.number}: run `tuner study confirm` again to weigh them")
        else:
            front = study_front(study, min_speedup_c32)
            record = pick_record(front, records, pick)
        spec = record.effective
    if policy is not None:
        steps = policy.candidate_steps()
        if pick is None:
            start = policy.start_steps()
            record = topk1_measurements(records)[0][start]
            pick = f"adaptive (starts at steps {start})"
            spec = record.effective
        elif spec.eagle_topk != 1 or spec.num_steps not in steps:
            raise ConfigError("--pick", "", f"trial {record.number} ({spec.label()}) cannot start SGLang's "
                              f"adaptive mode: it needs topk 1 and steps among the policy's {steps}; "
                              f"pick such a trial or leave --pick out")
    if spec is None:
        raise PickError(f"trial {record.number} has no effective setting recorded")
    if policy is not None:
        _check_policy_path(policy_path)
    extra = {"speculative_adaptive": True, "speculative_adaptive_config": policy_path} if policy else None
    mapping, argv, plan = server_mapping(config, space, suite, spec, extra)
    base = find_baseline(study)
    header, data = provenance(study.study_name, url, pick, record, spec,
                              None if base is None else base.attrs, config, suite, exported_at)
    warnings = (unread + unconfirmed_rival + _recorded_mismatches(record, mapping, tuple(extra or ()))
                + slower_than_baseline(config, record, pick, _confirmed_twice(conf, record.number)))
    if (refused := refused_now(space, spec)) is not None:  # measured by an older tuner
        warnings.append(f"trial {record.number} ({spec.label()}): {refused}; SGLang may not start this config: "
                        "export another (--pick N)")
    header += _traffic_notes(study, config, record, None if base is None else base.attrs, conf, pick)
    notes = ["", "Load it with: python -m sglang.launch_server --config THIS_FILE --host HOST --port PORT",
             "host and port are left out on purpose: they are deployment choices, not measured ones."]
    if plan.pinned:
        pins = ", ".join(f"{dash_key(k)} {v}" for k, v in plan.pinned.items())
        notes.append(f"pinned by tuner for the baseline and every trial alike: {pins} (the measurement ran "
                     f"so; more concurrency than measured is untested)")
    if space.attention is not None:
        notes.append(space.attention.line())
    if policy is not None:
        notes.append(f"adaptive: steps by batch size {policy.steps_by_batch_size()} from {policy_path} "
                     f"(relative paths open from the server's working directory)")
    from ..server.command import arg_tokens, config_refused

    refused = {name: kind for name, value in plan.server_args.items()
               if (kind := config_refused(name)) and arg_tokens(name, value)}  # a false store_true: nothing
    if refused:
        flags = shell_words(t for name in refused for t in arg_tokens(name, plan.server_args[name]))
        kinds = ", ".join(sorted(set(refused.values())))
        warnings.append(f"not in the YAML: SGLang's --config loader refuses these options (Unsupported config "
                        f"option ... {kinds}); add them to the command line: {flags}")
    if config.server.extra_args:
        warnings.append("the study's server.extra_args are not in the YAML (raw argv): add them to the command "
                        "line: " + shell_words(config.server.extra_args))
    if config.server.env:
        notes.append(f"the study set environment variables for the server: {', '.join(sorted(config.server.env))} "
                     f"(values not exported)")
    header += notes + [f"WARNING: {w}" for w in warnings] + [""]
    header = [_one_line(line) for line in header]
    return ServerExport(study.study_name, pick, record, spec, mapping, argv, header, data, warnings)


def _check_policy_path(policy_path: str | None) -> None:
    """The policy's path as the YAML's ``speculative-adaptive-config`` value: SGLang 0.5.23's
    ``--config`` loader hands it to argparse as the word after ``--speculative-adaptive-config``
    (``utils/server_args_config_parser.py``, ``_add_scalar_arg``), which reads ``-p.json`` as an
    option, so the server would not start (``expected one argument``; QA: ``--adaptive-out=-p.json``
    wrote both files, exit 0). :class:`ConfigError` naming the flag and the fix, before anything is
    written (:func:`tuner.config.server_arg_checks.option_like`, as for ``server.args``)."""
    from ..config.server_arg_checks import option_like

    if policy_path is None or option_like(str(policy_path)) is None:
        return
    raise ConfigError("--adaptive-out", str(policy_path), "the server config names this file as "
                      "speculative-adaptive-config, and SGLang's argparse reads a value starting with '-' as "
                      "an option (its --config load would fail: expected one argument); write "
                      f"./{policy_path}")


def _traffic_notes(study, config, record: TrialRecord, baseline: dict | None, conf, pick: str) -> list[str]:
    """Workload, SLOs, the lossless check and the confirmation of the exported trial."""
    from ..engine.study import WORKLOAD_ATTR

    lines = workload_lines(study.user_attrs.get(WORKLOAD_ATTR), config)
    lines += slo_lines(record.attrs) + baseline_slo_lines(baseline)
    if (text := lossless_line(record.attrs)) is not None:
        lines.append(text)
    cand = conf.candidate(record.number) if conf is not None else None
    if cand is not None:
        lines += confirmation_lines(conf, cand)
        if pick in conf.why and conf.picks.get(pick) is cand:
            lines.append(f"  --pick {pick} after confirmation: {conf.why[pick]}")
    else:
        # not "one measurement per setting": the sampler measures some settings again (QA: the header
        # said "the mean of 2 measurements" two lines above)
        lines.append("not confirmed: measured by the study alone, never interleaved with the baseline; "
                     "`tuner study confirm` re-measures the picks and the baseline, interleaved, for 95% "
                     "intervals")
    return lines


def check_yaml_path(path: Path) -> None:
    """SGLang's loader refuses a ``--config`` file not named ``.yaml``/``.yml``; say so before writing."""
    if path.suffix.lower() not in (".yaml", ".yml"):
        raise ConfigError("-o", str(path), "SGLang's --config loads only .yaml/.yml files; name it "
                          f"{path.with_suffix('.yaml').name} (or use --format json)")


def check_json_path(path: Path) -> None:
    """``--format json`` into a ``.yaml``/``.yml`` file: a name SGLang's ``--config`` loads, and YAML
    reads JSON, so the document's keys (``study``, ``pick``, ``server_args``, ...) would reach SGLang
    as the flags ``--study``, ``--pick`` (QA: written, exit 0; the launch failed on an unknown flag).
    Said before writing."""
    if path.suffix.lower() in (".yaml", ".yml"):
        raise ConfigError("-o", str(path), "--format json writes the server args with their provenance, which "
                          "SGLang's --config would read as unknown flags (--study, --pick, ...); name it "
                          f"{path.with_suffix('.json').name}, or leave --format json out for the config file")
