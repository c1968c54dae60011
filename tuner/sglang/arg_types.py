"""SGLang 0.5.23's own argparse types for its server arguments, as SGLang's code has them: the one
copy the study check (:mod:`tuner.config.server_arg_checks`), the simulator's parser
(:mod:`tuner.sim.parser`) and every place the tuner reads such a value as a number use.

Each raises ``argparse.ArgumentTypeError`` with SGLang's message, as SGLang's parser hands it to
argparse (``argument --context-length: Invalid integer value: ...``, exit 2).
"""

from __future__ import annotations

import argparse
import math
import re
from decimal import Decimal
from typing import Any


def human_readable_int(value: str) -> int:
    """SGLang 0.5.23's ``human_readable_int`` (``srt/utils/common.py``), the type of its token-count
    flags (``--context-length``, ``--max-total-tokens``, ``--max-prefill-tokens``,
    ``--cuda-graph-prefill-max-context`` alias ``--context-bucket``): the text stripped, then a
    number with an SI suffix (k, M, G, T; decimals allowed: 25.6k is 25600, truncated toward zero)
    or an IEC suffix (Ki, Mi, Gi, Ti; whole numbers only), case-sensitive; else whatever Python's
    ``int`` reads (``-1``, ``1_000``); SGLang's messages otherwise."""
    value = value.strip()
    si = {"k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}
    iec = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40}
    match = re.fullmatch(r"(\d+(?:\.\d+)?)(Ki|Mi|Gi|Ti|k|M|G|T)", value)
    if match:
        number, suffix = match.groups()
        if suffix in iec:
            if "." in number:
                raise argparse.ArgumentTypeError(
                    f"Decimals are not allowed with IEC suffixes like '{suffix}'. Use an integer IEC "
                    f"value such as '{int(Decimal(number))}{suffix}', or an SI value such as "
                    f"'{number}{suffix[0]}'.")
            return int(number) * iec[suffix]
        return int(Decimal(number) * si[suffix])
    try:
        return int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"Invalid integer value: '{value}'. Use a plain integer, SI suffixes (1k, 1M), or IEC suffixes "
            "(1Ki, 1Mi). Suffixes are case-sensitive.") from None


def json_list_type(value: str):
    """SGLang 0.5.23's ``json_list_type`` (``srt/utils/common.py``): the text as JSON, else its
    message. SGLang reads it with orjson, which refuses what Python's ``json`` takes and no double
    holds: NaN and Infinity, a number past a double's range (``1e400``, an integer of 400 digits:
    "number is infinity when parsed as double"), and a lone UTF-16 surrogate (``"\\ud800"``: "no
    low surrogate in string"). So does this (QA: ``forward_hooks: '[1e400]'`` was taken, and every
    launch would end in SGLang's argparse error)."""
    import json

    try:
        parsed = json.loads(value, parse_constant=_no_constant, parse_float=_double, parse_int=_orjson_int)
        _no_lone_surrogate(parsed)
        return parsed
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"Invalid JSON list: {value}. Please provide a valid JSON list.") from None


def _no_constant(name: str):
    raise ValueError(name)


def _double(text: str) -> float:
    number = float(text)
    if math.isinf(number):
        raise ValueError(f"number is infinity when parsed as double: {text}")
    return number


def _orjson_int(text: str) -> int | float:
    """An integer as orjson reads it: past 64 bits (signed below zero, unsigned above), a double."""
    number = int(text)
    if -2 ** 63 <= number < 2 ** 64:
        return number
    try:
        return _double(str(float(number)))
    except OverflowError:
        raise ValueError(f"number is infinity when parsed as double: {text[:40]}") from None


def _no_lone_surrogate(parsed) -> None:
    """ValueError for a string (a value or a key) holding half of a UTF-16 surrogate pair."""
    if isinstance(parsed, str):
        parsed.encode("utf-8")  # UnicodeEncodeError (a ValueError) for a lone surrogate
    elif isinstance(parsed, list):
        for item in parsed:
            _no_lone_surrogate(item)
    elif isinstance(parsed, dict):
        for key, item in parsed.items():
            _no_lone_surrogate(key)
            _no_lone_surrogate(item)


def token_count(value) -> int:
    """A token count a study gives (``server.args.context_length``: an integer, or text such as
    ``128k``) as SGLang reads it: the text the launcher writes (``str(value)``) through
    :func:`human_readable_int`. ``argparse.ArgumentTypeError`` (SGLang's message) when SGLang refuses
    it, a switch's true/false and a YAML float (``128000.0``) included."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise argparse.ArgumentTypeError(f"Invalid integer value: '{value}'.")
    return human_readable_int(str(value))


# --------------------------------------------------------------------------------------------------
# CUDA graphs: model_executor/cuda_graph_config.py (Phase, Backend, ALLOWED_KEYS_PER_PHASE)

#: ``Phase.ALL``
CUDA_GRAPH_PHASES = ("decode", "prefill")
#: ``ALLOWED_BACKENDS_PER_PHASE`` (the same three for both phases; ``Backend.ALL``)
CUDA_GRAPH_BACKENDS = ("full", "breakable", "disabled")
#: ``ALLOWED_KEYS_PER_PHASE``
CUDA_GRAPH_KEYS = {
    "decode": ("backend", "max_bs", "bs"),
    "prefill": ("backend", "max_bs", "bs", "max_context_size", "full_prefill_max_req",
                "full_prefill_prefix_chunk_tokens", "max_seq_len"),
}


def parse_cuda_graph_backend_arg(raw: str) -> str:
    """SGLang 0.5.23's ``parse_cuda_graph_backend_arg``, the type of ``--cuda-graph-backend-decode``
    and ``--cuda-graph-backend-prefill``: the removed ``tc_piecewise`` by name, before argparse's
    choices (:data:`CUDA_GRAPH_BACKENDS`) say "invalid choice" for anything else."""
    if raw == "tc_piecewise":
        raise argparse.ArgumentTypeError("tc_piecewise was removed; select breakable, full, or disabled")
    return raw


def parse_cuda_graph_config_arg(raw: str) -> dict:
    """SGLang 0.5.23's ``parse_cuda_graph_config_arg``, the type of ``--cuda-graph-config``: JSON (Python's
    ``json.loads``, as SGLang's) of an object of phase -> object of that phase's keys; a ``backend``
    is checked for ``tc_piecewise`` only (any other name passes the parser: :func:`cuda_graph_backend_problem`
    is SGLang's later check). SGLang's messages otherwise."""
    import json

    try:
        parsed = json.loads(raw)
    except json.JSONDecodeError as e:
        raise argparse.ArgumentTypeError(f"--cuda-graph-config must be JSON: {e}") from None
    if not isinstance(parsed, dict):
        raise argparse.ArgumentTypeError(
            f"--cuda-graph-config must be a JSON object, got {type(parsed).__name__}")
    result: dict = {}
    for phase, settings in parsed.items():
        phase = str(phase)
        if phase not in CUDA_GRAPH_PHASES:
            raise argparse.ArgumentTypeError(
                f"--cuda-graph-config: unknown phase '{phase}', expected one of {CUDA_GRAPH_PHASES}")
        if not isinstance(settings, dict):
            raise argparse.ArgumentTypeError(
                f"--cuda-graph-config['{phase}'] must be a JSON object, got {type(settings).__name__}")
        if "backend" in settings:
            parse_cuda_graph_backend_arg(settings["backend"])
        allowed = CUDA_GRAPH_KEYS[phase]
        result[phase] = {}
        for key, value in settings.items():
            if key not in allowed:
                raise argparse.ArgumentTypeError(
                    f"--cuda-graph-config['{phase}']: unknown key '{key}', expected one of {allowed}")
            result[phase][key] = value
    return result


def cuda_graph_backend_problem(config: dict | None) -> str | None:
    """SGLang 0.5.23's ``validate_cuda_graph_config`` (``arg_groups/cuda_graph_hook.py``, in its argument
    handling, before the model loads) for a parsed ``--cuda-graph-config``: a backend the JSON gives
    that its phase does not allow is its ``ValueError`` message (the per-phase flags take only allowed
    ones, by their choices; the JSON wins over them and is never changed by SGLang's compatibility
    cascade, which leaves an explicit backend alone). None when every given backend is allowed."""
    for phase in CUDA_GRAPH_PHASES:
        settings = (config or {}).get(phase, {})
        backend = settings.get("backend")
        if "backend" in settings and backend not in CUDA_GRAPH_BACKENDS:  # a JSON null too: None
            return (f"--cuda-graph-config[{phase}].backend={backend!r} not allowed; "
                    f"allowed: {CUDA_GRAPH_BACKENDS}")
    return None


def cuda_graph_sizes_problem(config: dict | None, bs_flags: dict | None = None) -> str | None:
    """SGLang 0.5.23's sizing of the CUDA-graph batch sizes a parsed ``--cuda-graph-config`` gives, in
    its argument handling (``arg_groups/memory_hook.py``, ``handle_gpu_memory_settings``, lines 201-207
    and 265-268; it runs after ``validate_cuda_graph_config`` and before the model and speculative
    hooks, on the baseline's launch too): a phase's ``bs`` (the JSON's, else its ``--cuda-graph-bs-*``
    flag, ``bs_flags[phase]``) is read by ``max(bs)`` for decode; without one its ``max_bs`` goes to
    ``generate_*_cuda_graph_batch_sizes``, ``range(..., max_bs + 1, ...)``. The JSON parser takes any
    value there, so a ``max_bs`` of ``"8"`` or ``8.0`` and a decode ``bs`` of ``[]`` or ``4`` end the launch:
    ``"TypeError: ..."``/``"ValueError: ..."`` with Python's message, as SGLang raises it; None when
    it sizes them (QA: ``{"decode": {"max_bs": "8"}}`` was taken by the study check and the simulator)."""
    for phase in CUDA_GRAPH_PHASES:
        settings = (config or {}).get(phase) or {}
        bs = settings.get("bs")
        if bs is None:
            bs = (bs_flags or {}).get(phase)
        max_bs = settings.get("max_bs")
        try:
            if bs is not None:
                if phase == "decode":
                    max(bs)  # memory_hook.py line 207 (prefill's bs is not read here)
            elif max_bs is not None:
                range(1, max_bs + 1)  # cuda_graph_hook.py, generate_*_cuda_graph_batch_sizes
        except (TypeError, ValueError) as exc:
            return f"{type(exc).__name__}: {exc}"
    return None


def decode_graph_max_bs(args: dict) -> int | None:
    """The largest decode batch SGLang 0.5.23 captures as a CUDA graph for the server arguments ``args``
    (underscore names, ``cuda_graph_config`` parsed), None when SGLang sizes it from GPU memory (or the
    sizes are no numbers: :func:`cuda_graph_sizes_problem` says so). ``arg_groups/cuda_graph_hook.py``,
    ``parse_cuda_graph_config``: ``--cuda-graph-max-bs-decode`` and ``--cuda-graph-bs-decode``, each
    overridden by the JSON's decode ``max_bs`` and ``bs``; then ``arg_groups/memory_hook.py`` lines
    201-207: a decode ``bs`` list, whoever gave it, makes ``max_bs`` its largest entry, whatever max_bs
    said. Decode batches above it run eager (QA qa226: ``cuda_graph_bs_decode: [1, 2, 4, 8]`` at C=32 was
    not warned about, and the simulator ran batches up to its profile's default as graphs)."""
    config = args.get("cuda_graph_config")
    if isinstance(config, str):  # as a study's server.args gives it: the JSON text SGLang's type parses
        try:
            config = parse_cuda_graph_config_arg(config)
        except argparse.ArgumentTypeError:
            return None
    decode = (config or {}).get("decode") or {}
    max_bs = decode["max_bs"] if "max_bs" in decode else args.get("cuda_graph_max_bs_decode")
    bs = decode["bs"] if "bs" in decode else args.get("cuda_graph_bs_decode")
    if bs is not None:
        try:
            max_bs = max(int(b) for b in bs)
        except (TypeError, ValueError):
            return None
    return argparse_int(max_bs)


def argparse_int(value: Any) -> int | None:
    """``value`` (a study's server argument: a YAML number or text) as SGLang's argparse reads an int
    option (``12``, ``"12"``, ``" +12 "``), else None (a bool, a float, other text)."""
    if isinstance(value, str) and re.fullmatch(r"\s*[+-]?\d+\s*", value):
        return int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def validate_cuda_graph_config(config: dict | None) -> None:
    """SGLang 0.5.23's ``validate_cuda_graph_config`` in its argument handling (its cuda-graph hook runs
    before the speculative one: ``arg_groups/pipeline.py``): ``ValueError`` with its message for a
    backend :func:`cuda_graph_backend_problem` finds."""
    problem = cuda_graph_backend_problem(config)
    if problem is not None:
        raise ValueError(problem)


# --------------------------------------------------------------------------------------------------
# Values SGLang's parser takes and its launch refuses before loading


def log_level_problem(level: str) -> str | None:
    """Why SGLang 0.5.23 cannot start with ``--log-level level``, or None. Its parser takes any text;
    its logger setup, first thing at launch (``utils/common.py``, ``configure_logger``:
    ``logging.basicConfig(level=getattr(logging, level.upper()))``), fails on a name that is not one
    of ``logging``'s levels (AttributeError, before loading). Its HTTP server later reads the level
    too (uvicorn's lower-cased ``LOG_LEVELS``, which lack ``warn``, ``fatal``, ``notset``), which is
    not judged here (an HTTP/2 server, granian, reads it otherwise)."""
    import logging

    if isinstance(getattr(logging, level.upper(), None), int):
        return None
    return (f"SGLang's logger setup fails on it before loading (configure_logger: module 'logging' has no "
            f"attribute {level.upper()!r}); give debug, info, warning, error or critical")


#: Text options SGLang 0.5.23's parser takes as any text and every launch parses as JSON: the reader
#: (Python's json, or orjson), the source that reads it, and whether a non-empty result must be an object
JSON_AT_LAUNCH = {
    # configs/model_config.py (ModelConfig: json.loads), applied by utils/hf_transformers/config.py
    # (get_config: config.update(...), .items()) when the result is not empty
    "json_model_override_args": ("json.loads", "configs/model_config.py", True),
    # configs/load_config.py (LoadConfig.__post_init__: orjson.loads of a non-empty text; "" is {})
    "model_loader_extra_config": ("orjson.loads", "configs/load_config.py", False),
}


def json_at_launch_problem(dest: str, text: str) -> str | None:
    """Why SGLang 0.5.23 cannot start with ``--<dest> text`` for an option of :data:`JSON_AT_LAUNCH`,
    or None (also for any other option). Its parser takes any text there (type str,
    ``arg_groups/fields/model.py``: "a dictionary in JSON string format"); every launch then parses
    it, and ``json_model_override_args`` also walks it as a mapping: text that is not JSON (or, there,
    JSON that is not an object) fails every launch, the baseline's too."""
    import json

    if dest not in JSON_AT_LAUNCH:
        return None
    reader, _source, mapping = JSON_AT_LAUNCH[dest]
    if reader == "orjson.loads" and text == "":
        return None
    example = "'{\"rope_scaling\": {\"factor\": 2.0}}'" if mapping else "'{\"key\": \"value\"}'"
    try:
        parsed = (json.loads(text) if reader == "json.loads" else
                  json.loads(text, parse_constant=_no_constant, parse_float=_double, parse_int=_orjson_int))
        if reader == "orjson.loads":
            _no_lone_surrogate(parsed)
    except ValueError as exc:
        return (f"SGLang reads it with {reader} at every launch, and it is not JSON ({exc}); write "
                f"{'a JSON object' if mapping else 'JSON'} in quotes, keys and text in double quotes, "
                f"true/false/null in lower case: {example}")
    if mapping and parsed and not isinstance(parsed, dict):
        return (f"SGLang applies it to the model's config as a mapping at every launch, and it is JSON "
                f"{type(parsed).__name__}, not an object; write a JSON object in quotes: {example}")
    return None
