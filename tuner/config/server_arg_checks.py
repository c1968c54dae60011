"""Server arguments a study or a search space gives (``server.args``, a space's ``fixed``), checked
against SGLang 0.5.23's own parser table (:mod:`tuner.sglang.server_args`): SGLang's names, never a
flag the tuner sets itself, each value of its option's type and one argparse takes as a value.

Why its own module: :mod:`tuner.config.space` (the search-space file) and :mod:`tuner.config.study`
(the study file) both hold server arguments; the rules for one argument are the same in each.
Why one module (past 400 lines): the name, the value and the arguments SGLang refuses together
(pipeline parallelism, the hierarchical cache without a radix cache) are one check,
:func:`check_server_args`, run alike on ``server.args``, a space's ``fixed`` and ``extra_args``; split,
those three callers would each have to run the parts in the same order.
"""

from __future__ import annotations

import json
import math
from typing import Any

from ..sglang.rules import flag_name
from .yamlfile import did_you_mean

SPEC_PARAMS = ("speculative_num_steps", "speculative_eagle_topk", "speculative_num_draft_tokens")


#: Server arguments the tuner sets itself on every launch, from the study's own keys (the model, the
#: parallelism, where it listens, the speculative flags the search owns, the simulator's clock). Set in
#: ``server.args``, a space's ``fixed`` or ``server.extra_args`` they would be given twice, and the
#: last one would win: the server would run something else than the study records.
RESERVED_SERVER_ARGS = ("model_path", "tp_size", "host", "port", "speculative_algorithm",
                        "speculative_draft_model_path", *SPEC_PARAMS, "config",
                        "sim_profile", "sim_speedup", "sim_load_seconds", "sim_noise", "sim_seed")


_KEY = ("makes SGLang answer the benchmark's requests (/generate, /v1/*, /server_info, /flush_cache) 401 "
        "without an API key, which the tuner's client does not send; the server would start and every "
        "measurement fail. Measure without it (the server listens on server.host only) and add the key to "
        "the exported config when you deploy it")
_TLS = ("makes SGLang serve HTTPS, and the tuner speaks plain HTTP to the server it launched: every launch "
        "would wait out server.startup_timeout_s. Measure without TLS (the server listens on server.host "
        "only) and add it to the exported config when you deploy it")
_GRPC = ("makes SGLang serve gRPC on --port instead of its HTTP API, which the tuner's benchmark speaks: "
         "every launch would wait out server.startup_timeout_s. Tune over HTTP; the setting carries over")
_NO_TOKENIZER = ("makes SGLang refuse text prompts (400 on every request), and the suite sends text; tune "
                 "with the tokenizer, the setting carries over")
_ADAPTIVE = ("makes SGLang change the speculative steps by batch size during the suite, so a trial would not "
             "measure the setting it records (and its answers would be judged against the wrong steps); "
             "tune without it, then write the policy from the study's measurements with tuner study export "
             "--adaptive")

#: Server arguments under which SGLang 0.5.23 does not answer the benchmark's plain-HTTP text
#: requests, and why. api_key: a key check on every route but /health*, /ready and /metrics;
#: admin_api_key: on /flush_cache (``utils/auth.py`` ``decide_request_auth``, lines 74-151;
#: ``entrypoints/http_server.py`` lines 1025-1026 and 2887-2898). ssl_certfile / ssl_keyfile: uvicorn
#: serves TLS (``http_server.py`` lines 2916-2943; ``server_args.py`` line 459: its own URL is
#: https). smg_grpc_mode / grpc_mode: gRPC instead of HTTP (``launch_server.py`` lines 43-50).
#: skip_tokenizer_init: text prompts refused (``managers/tokenizer_manager.py`` lines 1121-1126).
#: speculative_adaptive: the server answers, but runs another number of steps than the trial's at each
#: batch size (``speculative/adaptive_spec_params.py``; its ``/server_info`` keeps the steps it started
#: at), so what a trial measured would be a policy's, stored as one setting's (QA qa216).
#: The health checks the launcher waits on stay open under a key, so such a server would start and
#: then fail on the GPU node only; the simulator checks keys as SGLang does (``tuner.sim.auth``).
UNMEASURABLE_ARGS = {"api_key": _KEY, "admin_api_key": _KEY, "ssl_certfile": _TLS, "ssl_keyfile": _TLS,
                     "smg_grpc_mode": _GRPC, "grpc_mode": _GRPC, "skip_tokenizer_init": _NO_TOKENIZER,
                     "speculative_adaptive": _ADAPTIVE}


def unmeasurable_problem(name: str, value: Any = True) -> str | None:
    """Why the benchmark cannot measure a server given argument ``name`` (underscore form, an alias or
    a unique prefix, as SGLang's argparse takes it) set to ``value``, or None
    (:data:`UNMEASURABLE_ARGS`; a switch set false, or a null, sets nothing)."""
    if value is False or value is None:
        return None
    dest = _dest_among(name, UNMEASURABLE_ARGS)
    if dest is None:
        return None
    alias = "" if dest == name else f" (SGLang reads it as {dest})"
    return f"{name}{alias} {UNMEASURABLE_ARGS[dest]}"


def reserved_arg(name: str) -> str | None:
    """The reserved argument ``name`` (underscore form) would set, or None. An alias or a unique
    prefix counts, as SGLang's argparse takes it (``model`` is ``--model-path``, ``tp`` is
    ``--tp-size``: ``tuner.sglang.server_args``, SGLang 0.5.23's own parser table)."""
    return _dest_among(name, RESERVED_SERVER_ARGS)


def _dest_among(name: str, dests) -> str | None:
    """The argument of ``dests`` that ``name`` (underscore form) sets, itself or as an alias or a
    unique prefix SGLang's argparse takes (its parser table, :mod:`tuner.sglang.server_args`); None
    when it sets none of them."""
    from ..sglang.server_args import server_args_table

    if name in dests:
        return name
    option = server_args_table().option_for_flag(flag_name(name))
    return option.dest if option is not None and option.dest in dests else None


def check_server_args(args: dict, where: str, written: dict[str, str] | None = None,
                      stored: bool = False) -> dict:
    """Server arguments (``server.args``, a space's ``fixed``) are SGLang's underscore names, never
    the flags the tuner itself sets, and each one SGLang 0.5.23 has, with a value of its type
    (:func:`_check_server_arg`). ``ValueError`` naming the first that is not; otherwise ``args``
    under SGLang's own names: an alias or an abbreviation SGLang's parser takes (``attention_back``)
    becomes the name it stands for (``attention_backend``), so the rules, the launcher's pins and the
    conflict checks, which read names, see it.

    A typo here would otherwise surface on the GPU node only, as every launch of the night failing
    with argparse's "unrecognized arguments". ``written``: the unquoted numbers as the file wrote
    them (:func:`tuner.config.yamlfile.written_numbers`), for a text option given one. ``stored``: a
    stored study's config read back (not new input): a false SGLang's command line cannot give
    (:func:`unset_by_false`), or JSON text SGLang cannot parse at launch
    (:func:`tuner.sglang.arg_types.json_at_launch_problem`), is kept as the study stored it, so a
    study created before those checks stays readable (export, status).

    One pass, each argument checked whole before the next: the first wrong one in the file's order
    ends it. Each name is looked up in SGLang's table (about a millisecond), so checking every name
    for one problem before any for the next took minutes on a file of many unknown names (QA: 200,000
    in a 3.7 MB study file, within the 4 MiB cap: 198 s before "k0: not a server argument"); SGLang
    has some 500 arguments and each may be given once, so one pass stops within them."""
    out: dict = {}
    given: dict[str, str] = {}  #: SGLang's name -> the name the file used
    for name, value in args.items():
        if not name.strip():  # `"": 2` read as the flag `--`, "ambiguous" among every flag SGLang has
            raise ValueError(f"{name!r}: an empty key is no server argument; write the argument's name "
                             f"(underscores, as SGLang names it), or remove the line from {where}")
        if "-" in name:
            raise ValueError(f"{name!r}: write server arguments with underscores ({name.replace('-', '_')})")
        owner = reserved_arg(name)
        if owner is not None:
            alias = "" if owner == name else f" (SGLang reads it as {owner})"
            raise ValueError(f"{name!r}{alias} is searched or set by the tuner from the study's own keys; "
                             f"remove it from {where}")
        if (problem := unmeasurable_problem(name, value)) is not None:
            raise ValueError(f"{problem}; remove it from {where}")
        dest = _check_server_arg(name, value, written or {})
        if not stored and (problem := unset_by_false(dest, value)) is not None:
            raise ValueError(f"{name}: {problem}")
        if not stored and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            from ..sglang.arg_types import json_at_launch_problem

            # str(): the text argv holds (a YAML number too); None for the other options
            if (problem := json_at_launch_problem(dest, str(value))) is not None:
                raise ValueError(f"{name}: {value!r}: {problem}")
        if dest in given:
            raise ValueError(f"{name} and {given[dest]} are both SGLang's {dest}; give it once")
        given[dest], out[dest] = name, value
    if "cuda_graph_config" in out:
        _check_cuda_graph_sizes(given["cuda_graph_config"], out)
    if "pp_size" in out:
        _check_pipeline_parallel(given["pp_size"], out, where)
    if radix_cache_refusal(out) is not None:
        other = given.get("disable_radix_cache") if out.get("disable_radix_cache") is True else \
            f"{given['disaggregation_mode']}: decode"
        raise ValueError(f"{given['enable_hierarchical_cache']} and {other}: {radix_cache_refusal(out)}; "
                         f"remove one of them from {where}")
    return out


def unset_by_false(dest: str, value: Any) -> str | None:
    """Why ``dest: false`` cannot be given to SGLang 0.5.23 as the study means it, or None. A false
    store_true is left off the command line (and out of the export: SGLang's ``--config`` loader skips
    it), which keeps SGLang's default; for the fields whose default is None (``ServerArgs``:
    ``enable_multimodal``, ``enable_lora``, ...) SGLang then decides itself, not as false:
    ``enable_multimodal`` by the model's architecture (``configs/model_config.py``), ``enable_lora`` on
    with ``lora_paths`` (``arg_groups/lora_hook.py``). QA (qa200): ``enable_multimodal: false`` was
    created and exported, and SGLang would run the multimodal model with it on."""
    from ..sglang.server_args import server_args_table

    table = server_args_table()
    option = table.option(dest)
    if value is not False or option is None or option.action != "store_true" \
            or table.defaults().get(dest, False) is not None:
        return None
    return (f"false cannot be given on SGLang {table.sglang_version}'s command line: {option.flags[0]} only "
            "turns it on, and left out it stays unset (None), which SGLang then decides itself, not as "
            "false; leave the key out (or give true)")


def radix_cache_refusal(args: dict) -> str | None:
    """SGLang 0.5.23's refusal of the hierarchical cache without a radix cache (``args`` under SGLang's
    own names: :func:`tuner.sglang.kv_cache.hicache_without_radix`), or None. QA (qa194): the agreement
    fuzz, ``--seed 7 --fuzz-case 741`` and ``869``, ``--seed 8 --fuzz-case 685`` (a decode node): the
    tuner took the study."""
    from ..sglang.kv_cache import hicache_without_radix

    if not hicache_without_radix(args):
        return None
    return (f"SGLang {_sglang_version()} refuses them together at every launch, the baseline's too "
            "(arg_groups/kv_cache_hook.py: 'The arguments enable-hierarchical-cache and disable-radix-cache are "
            "mutually exclusive')")


def pipeline_parallel_refusal(args: dict) -> str | None:
    """SGLang 0.5.23's refusal of ``args``' pipeline parallelism (``pp_size`` above 1, under SGLang's
    own names) with the study's speculative decoding, or None. Its launch checks
    (``arg_groups/validation_hook.py`` lines 128-164, ``check_pipeline_parallel_compat``, which
    ``ServerArgs.check_server_args`` runs after argument handling and before anything loads) assert it
    away with EAGLE3 ("Pipeline parallelism currently only supports EAGLE (non-multi-layer) speculative
    decoding"), and with EAGLE unless the server is the prefill node of a disaggregated deployment
    ("PP + speculative decoding (MTP) is only supported on prefill nodes"), which does not answer the
    benchmark alone: an ``AssertionError`` at every speculative launch."""
    try:
        stages = int(args.get("pp_size") or 1)
    except (TypeError, ValueError):
        return None  # not a number: its own check says so
    if stages <= 1:
        return None
    return ("SGLang 0.5.23 refuses pipeline parallelism with EAGLE3, and with EAGLE outside a disaggregated "
            "prefill node, at every speculative launch (arg_groups/validation_hook.py, "
            "check_pipeline_parallel_compat)")


def _check_pipeline_parallel(name: str, args: dict, where: str) -> None:
    """:func:`pipeline_parallel_refusal` as the study's check: ``ValueError`` naming the argument and
    the fix. QA (qa194): a study with ``pp_size: 2`` was created, its baseline (no speculation) ran, and
    every trial ended at launch."""
    why = pipeline_parallel_refusal(args)
    if why is not None:
        raise ValueError(f"{name}: {args['pp_size']!r}; {why}: every trial would fail. Remove it from "
                         f"{where} and split the model with the study's tp_size")


def _check_cuda_graph_sizes(name: str, args: dict) -> None:
    """The batch sizes a ``cuda_graph_config`` (already parsed as SGLang's type takes it) gives, as SGLang
    0.5.23's argument handling sizes them with the ``cuda_graph_bs_*`` arguments beside it
    (:func:`tuner.sglang.arg_types.cuda_graph_sizes_problem`): every launch, the baseline's too, would
    end before loading. ``ValueError`` naming the argument and the fix."""
    from ..sglang.arg_types import cuda_graph_sizes_problem, parse_cuda_graph_config_arg

    text = str(args["cuda_graph_config"])
    problem = cuda_graph_sizes_problem(parse_cuda_graph_config_arg(text), {
        "decode": args.get("cuda_graph_bs_decode"), "prefill": args.get("cuda_graph_bs_prefill")})
    if problem is not None:
        raise ValueError(f"{name}: SGLang {_sglang_version()} refuses {text!r} while handling its arguments, "
                         f"every launch the baseline's too ({problem}); give max_bs as an integer (8, not "
                         f"\"8\" or 8.0) and bs as a non-empty list of integers")


def _check_server_arg(name: str, value: Any, written: dict[str, str]) -> str:
    """A server argument SGLang 0.5.23 has (``tuner.sglang.server_args``, its own parser table), with
    a value of its type (an integer flag an integer, a switch true or false, one of its choices);
    ``page_size`` and ``max_running_requests`` at least 1, a ``log_level`` SGLang's logger takes: its name in SGLang's table
    (``dest``). ``ValueError`` naming the argument otherwise."""
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
            raise ValueError(f"{name}: expected true or false (a switch), got {_shown(value)}"
                             f"{_switch_hint(value)}")
        if option.action == "boolean_optional" and _off_form(option, flag_name(name)):
            # argparse takes --no-enable-tf32-matmul (or a prefix of it) for enable_tf32_matmul set off;
            # as a key with a value it was kept under the dest, value as given: no_enable_tf32_matmul:
            # true launched (and exported) --enable-tf32-matmul, the opposite of its name (QA, qa200)
            raise ValueError(f"{name}: is {flag_name(name)}, the off form of SGLang's switch {option.dest}; "
                             f"a key names the switch and its value says on or off: write {option.dest}: false "
                             f"({option.dest}: true for on)")
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
    if many and option.type in ("int", "float") and isinstance(value, str) \
            and len(value.replace(",", " ").split()) > 1:
        # `cuda_graph_bs_decode: "1 2 4"`: one argv word, which SGLang's argparse reads as one item
        # (int('1 2 4') fails; its --config loader passes the text as one word too), so the items
        # are to be a YAML list (QA, qa228: "expected an integer, got '1 2 4'", naming no fix). A text
        # item may hold a space (a path): one word, one item, as SGLang reads it
        shown = ", ".join(value.replace(",", " ").split())
        raise ValueError(f"{name}: expected a list, each item {_KIND[option.type]}, got the text {value!r}, "
                         f"which SGLang would read as one value; write the items as a YAML list: {name}: [{shown}]")
    for i, item in enumerate(items):
        _check_server_value(name, option, item, written.get(f"{name}[{i}]" if many else name))
    if option.dest == "page_size" and int(value) < 1:
        raise ValueError(f"page_size: {value!r}; a page holds at least 1 token")
    if option.dest == "max_running_requests" and int(value) < 1:
        # mem_cache/kv_cache_configurator.py line 3128 (resolve_max_num_reqs): SGLang 0.5.23 keeps the value
        # through argument handling and sizes the requests per DP worker as max(1, N // attn_dp_size): 0 is
        # one request at a time, not "no limit", and every concurrency level would measure a serialized server.
        # The message names the number argparse reads ('0' written as text is 0; QA qa152: "max(1, '0')")
        raise ValueError(f"{name}: {value!r}; SGLang runs max(1, {int(value)}) = 1 request at a time (it is not "
                         "'no limit'), so every concurrency level would be measured one request after another: "
                         "leave it out (the tuner sets it to the suite's largest concurrency) or give at least 1")
    if option.dest == "log_level":
        from ..sglang.arg_types import log_level_problem

        problem = log_level_problem(str(value))
        if problem is not None:
            raise ValueError(f"{name}: {value!r}: {problem}")
    return option.dest


#: YAML 1.1's booleans other than true/false, which PyYAML (SGLang's --config loader) reads as one
_YAML_1_1_BOOLEANS = {"y", "yes", "n", "no", "on", "off"}


def _switch_hint(value: Any) -> str:
    """The fix for a switch given text that reads as a boolean somewhere: quoted ``"true"`` (text in
    every YAML), or YAML 1.1's ``yes``/``on``/``off`` (text in YAML 1.2, which the tuner reads; a
    boolean to PyYAML). QA (qa228): ``disable_cuda_graph: "true"`` and ``enable_dp_attention: yes``
    said only "expected true or false (a switch), got 'true'"."""
    if not isinstance(value, str):
        return ""
    word = value.strip().lower()
    if word in ("true", "false"):
        return f" (quoted, it is text): remove the quotes, {word}"
    if word in _YAML_1_1_BOOLEANS:
        on = word in ("y", "yes", "on")
        return (f" (these files are read as YAML 1.2, where {value} is text, not a boolean): write "
                f"{'true' if on else 'false'}")
    return ""


def _off_form(option, flag: str) -> bool:
    """Whether SGLang's argparse takes ``flag`` (a study's key as a flag) for the ``--no-`` form of the
    ``--flag/--no-flag`` switch ``option`` (BooleanOptionalAction, Lib/argparse.py: it registers
    ``--no-X`` beside each ``--X``): that flag itself, or a prefix of it alone among the switch's flags."""
    on = [f for f in option.flags if "--no-" + f[2:] in option.flags]
    if flag in option.flags:
        return flag not in on
    return not any(f.startswith(flag) for f in on)


#: What a value of each type of SGLang's table is called in an error (``tuner.sglang.server_args``:
#: int, float, or str for every other parser SGLang gives, its custom ones included, which read text)
_KIND = {"int": "an integer", "human_int": "an integer", "float": "a number", "str": "a string",
         "json": "JSON text", "json_list": "JSON text", "cuda_graph_config": "JSON text",
         "cuda_graph_backend": "a string"}


def _shown(value: Any) -> str:
    """``value`` as an error shows it, in YAML's words where Python's differ (null, a mapping)."""
    if value is None:
        return "null (leave the key out for SGLang's default)"
    return f"a mapping {value!r}" if isinstance(value, dict) else repr(value)


def _check_server_value(name: str, option, value: Any, written: str | None = None) -> None:
    """One value of ``option`` as SGLang's argparse reads it: its type (the text argparse gets is
    ``str(value)``, so a string, an integer or a number; never null, a switch's true/false, a list or
    a mapping), one of its choices; a text option's number as it was written (``written``)."""
    if isinstance(value, float) and not math.isfinite(value):  # as every float of the files (StrictModel)
        raise ValueError(f"{name}: must be a finite number, got {value!r}")
    expected = _KIND[option.type]
    if option.type == "human_int":  # 128k, 1Mi: kept as written (the export's YAML too), read by SGLang
        _check_token_count(name, value)
        ok = True
    elif option.type in ("cuda_graph_config", "cuda_graph_backend"):
        ok = isinstance(value, (str, int, float)) and not isinstance(value, bool)
        if ok:  # argv holds str(value): a number is text SGLang's parser reads (and refuses) too
            _check_cuda_graph(name, option.type, str(value))
    elif option.type == "int":
        ok = _parses(value, int)
        if ok:
            _check_int64(name, value, int(value))
    elif option.type == "float":
        ok = _parses(value, float)
    else:
        ok = isinstance(value, (str, int, float)) and not isinstance(value, bool)
        # SGLang's argparse type parses the text (json.loads, json_list_type): a launch fails otherwise
        ok = ok and (option.type not in ("json", "json_list") or _is_json(str(value), option.type))
    if ok and option.choices and str(value) not in option.choices:
        raise ValueError(f"{name}: {value!r} is not one of SGLang's choices "
                         f"({', '.join(option.choices)}){did_you_mean(str(value), option.choices)}")
    text_kinds = ("str", "json", "json_list", "cuda_graph_config")
    if not ok and option.type in text_kinds and isinstance(value, dict):
        # SGLang parses such an option's text itself (json_model_override_args: json.loads); the
        # launcher passes the YAML value as the text, so a mapping must be written as JSON
        raise ValueError(f"{name}: expected a string (JSON text), got {_shown(value)}; write the "
                         f"mapping as JSON in quotes: {name}: '{json.dumps(value, default=str)}'")
    if not ok:
        raise ValueError(f"{name}: expected {expected}, got {_shown(value)}")
    if option.type == "str" and written is not None and not isinstance(value, bool) and str(value) != written:
        # A text option (a model name, a path, a revision) given an unquoted 0x10, 007 or 1.50: YAML
        # reads a number, whose str() SGLang would be given ('16', '7', '1.5'), not the text written;
        # SGLang's own --config loader (yaml.safe_load, then str(value):
        # srt/utils/server_args_config_parser.py) retypes it too. Quoted, it is text in both.
        raise ValueError(f"{name}: YAML reads the unquoted {written} as the number {value!r}, so SGLang "
                         f"would be given {str(value)!r}; quote it ({name}: '{written}') to give the text")
    problem = None if isinstance(value, bool) else option_like(str(value))  # str(): as argv holds it
    if problem is not None and isinstance(value, float):
        # YAML's -0.00001 is the float -1e-05, and argv holds str(value): the user wrote plain decimals
        # (QA, second pass), so the fix is text, which goes to argv as written
        plain = format(value, ".20f").rstrip("0")
        raise ValueError(f"{name}: {value!r} goes on the command line as {str(value)!r}, which SGLang's "
                         f"argparse reads as an option (the launch would fail: expected one argument); give "
                         f"it as text in plain decimals: {name}: '{plain}'")
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


def _check_token_count(name: str, value: Any) -> None:
    """A token count (SGLang's ``human_readable_int`` options: ``--context-length`` and three more) as
    SGLang reads the text the launcher writes (:func:`tuner.sglang.arg_types.token_count`): ``128k``,
    ``1Mi``, ``4096``; ``ValueError`` naming the argument, with SGLang's reason, otherwise."""
    import argparse

    from ..sglang.arg_types import token_count

    if value is None or isinstance(value, (bool, dict, list)):
        raise ValueError(f"{name}: expected an integer, got {_shown(value)}")
    try:
        number = token_count(value)
    except argparse.ArgumentTypeError as exc:
        raise ValueError(f"{name}: SGLang {_sglang_version()} refuses {value!r}: {exc}") from None
    _check_int64(name, value, number)


def _check_cuda_graph(name: str, kind: str, text: str) -> None:
    """``--cuda-graph-config`` (or a ``--cuda-graph-backend-*``) as SGLang 0.5.23 takes it: its own
    argparse type (:mod:`tuner.sglang.arg_types`), and for the JSON its argument handling's check of
    the backends it gives (``validate_cuda_graph_config``, before the model loads: every launch would
    fail). ``ValueError`` naming the argument, with SGLang's reason, otherwise."""
    import argparse

    from ..sglang.arg_types import (cuda_graph_backend_problem, parse_cuda_graph_backend_arg,
                                    parse_cuda_graph_config_arg)

    try:
        if kind == "cuda_graph_backend":
            parse_cuda_graph_backend_arg(text)
            return
        problem = cuda_graph_backend_problem(parse_cuda_graph_config_arg(text))
    except argparse.ArgumentTypeError as exc:
        problem = str(exc)
    if problem is not None:
        raise ValueError(f"{name}: SGLang {_sglang_version()} refuses {text!r}: {problem}")


def _sglang_version() -> str:
    from ..sglang.server_args import server_args_table

    return server_args_table().sglang_version


def _is_json(text: str, kind: str) -> bool:
    """Whether SGLang's type for ``kind`` reads ``text``: ``json.loads``, or its ``json_list_type``
    (orjson: no NaN or Infinity; :func:`tuner.sglang.arg_types.json_list_type`)."""
    import argparse

    from ..sglang.arg_types import json_list_type

    try:
        json_list_type(text) if kind == "json_list" else json.loads(text)
        return True
    except (ValueError, argparse.ArgumentTypeError):
        return False


def _parses(value: Any, kind: type) -> bool:
    """Whether SGLang's argparse would read ``value`` as ``kind`` (an int, or a float)."""
    if isinstance(value, bool) or (kind is int and isinstance(value, float)):
        return False
    try:
        number = kind(value)  # "16" too: argparse reads the text
    except (TypeError, ValueError):
        return False
    return kind is int or math.isfinite(number)  # (an int past a float's range is no infinity)


#: The largest count SGLang's engine can hold: it keeps them in 64-bit integers (PyTorch tensors, CUDA).
INT64_MAX = 2 ** 63 - 1


def _check_int64(name: str, value: Any, number: int) -> None:
    """An integer SGLang's argparse reads (a Python int, of any size) that its engine cannot hold:
    ``ValueError`` naming the argument. QA: one 400 digits long ended ``study create`` in an
    OverflowError, and a token count that long crashed the model backend's memory check."""
    if not -INT64_MAX - 1 <= number <= INT64_MAX:
        shown = repr(value) if len(repr(value)) <= 40 else f"an integer of {len(str(abs(number)))} digits"
        raise ValueError(f"{name}: {shown} does not fit in 64 bits, as SGLang's engine holds its counts "
                         f"(at most {INT64_MAX})")
