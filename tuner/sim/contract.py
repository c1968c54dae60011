"""SGLang 0.5.23's JSON contract for a ``/generate`` body: the schema gate after FastAPI's parse.

SGLang's ``generate_request`` (``srt/entrypoints/http_server.py`` line 933) checks the parsed body
with ``generate_contract_error`` (``srt/entrypoints/api_contract.py``), which runs the generated
decoder ``GenerateRequest.from_json_value`` (``sglang/api/v1/api_types.py``); a violation is HTTP
400 with ``{"error": "<text>"}`` (a plain string, not an object). The texts are serde's, and are
reproduced here exactly:

* ``invalid type: string "yes", expected a boolean`` (a wrong JSON type; ``_invalid_type``);
* ``unknown field `foo`, expected one of `max_new_tokens`, ...`` (``sampling_params`` rejects
  unknown keys; the request object itself ignores them: ``_unknown_field``);
* ``invalid value: integer `-1`, expected u64`` (``max_thinking_tokens``).

Each field's kind is copied from ``decode_GenerateRequest`` and ``decode_SamplingParams``
(api_types.py lines 1259-1330 and 1413-1496). Media, KV-hint and ``images_config`` fields are
checked as "any JSON" here: the simulator refuses them later in any case.
"""

from __future__ import annotations

from typing import Any, Callable


class ContractError(ValueError):
    """The body violates SGLang's JSON contract; ``str()`` is SGLang's text."""


def _unexpected(v: Any) -> str:
    # api_types.py _unexpected: serde's `Unexpected` display.
    if v is None:
        return "null"
    if isinstance(v, bool):
        return f"boolean `{'true' if v else 'false'}`"
    if isinstance(v, int):
        return f"integer `{v}`"
    if isinstance(v, float):
        return f"floating point `{v}`"
    if isinstance(v, str):
        return f'string "{v}"'
    if isinstance(v, list):
        return "sequence"
    if isinstance(v, dict):
        return "map"
    return type(v).__name__


def _invalid(v: Any, expected: str) -> ContractError:
    return ContractError(f"invalid type: {_unexpected(v)}, expected {expected}")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _int(v: Any, expected: str = "i64") -> None:
    if not _is_int(v):
        raise _invalid(v, expected)


def _uint(v: Any) -> None:
    _int(v, "u64")
    if v < 0:
        raise ContractError(f"invalid value: integer `{v}`, expected u64")


def _float(v: Any) -> None:
    if not (isinstance(v, (int, float)) and not isinstance(v, bool)):
        raise _invalid(v, "f64")


def _bool(v: Any, expected: str = "a boolean") -> None:
    if not isinstance(v, bool):
        raise _invalid(v, expected)


def _str(v: Any, expected: str = "a string") -> None:
    if not isinstance(v, str):
        raise _invalid(v, expected)


def _seq(v: Any) -> list:
    if not isinstance(v, list):
        raise _invalid(v, "a sequence")
    return v


def _map(v: Any, expected: str = "a map") -> dict:
    if not isinstance(v, dict):
        raise _invalid(v, expected)
    return v


def _or_list(name: str, item: Callable[[Any, str], None], item_expected: str):
    """``XOrList``: one value, or an array of values (each checked with ``item``)."""
    def check(v: Any) -> None:
        if isinstance(v, list):
            for e in v:
                item(e, item_expected)
        else:
            item(v, f"a value or an array of values for {name}")
    return check


def _str_or_list(v):
    _or_list("StringOrList", _str, "a string")(v)


def _bool_or_list(v):
    _or_list("BoolOrList", _bool, "a boolean")(v)


def _int64_or_list(v):
    _or_list("Int64OrList", _int, "i64")(v)


def _optional_str_or_list(v):
    if isinstance(v, list):
        for e in v:
            if e is not None:
                _str(e)
    else:
        _str(v, "a value or an array of values for OptionalStringOrList")


def _optional_int64_or_list(v):
    if isinstance(v, list):
        for e in v:
            if e is not None:
                _int(e)
    else:
        _int(v, "a value or an array of values for OptionalInt64OrList")


def _token_ids(v):
    for e in _seq(v):
        _int(e)


def _token_ids_or_list(v):
    if not isinstance(v, list):
        raise _invalid(v, "a value or an array of values for TokenIdsOrList")
    # [] and [scalar, ...] are one flat list; anything else is a batch.
    if not v or (isinstance(v[0], (int, float)) and not isinstance(v[0], bool)):
        _token_ids(v)
    else:
        for e in v:
            _token_ids(e)


def _int64_list(v):
    for e in _seq(v):
        _int(e)


def _optional_str_list(v):
    for e in _seq(v):
        if e is not None:
            _str(e)


def _str_list_or_list(v):
    if not isinstance(v, list):
        raise _invalid(v, "a value or an array of values for StringListOrList")
    if not v or isinstance(v[0], str):
        for e in v:
            _str(e)
    else:
        for e in v:
            for x in _seq(e):
                _str(x)


def _map_of(check):
    def run(v):
        for e in _map(v).values():
            check(e)
    return run


def _any(v):
    pass


_WATERMARK = {"enabled": _bool, "key": _str, "context_window": _int}


def _watermark(v):
    for key, x in _map(v, "struct WatermarkRequestConfig").items():
        if key not in _WATERMARK:
            raise _unknown_field(key, tuple(_WATERMARK))
        if x is not None:
            _WATERMARK[key](x)


def _str_seq(v):
    for e in _seq(v):
        _str(e)


#: decode_SamplingParams, in the schema's field order (api_types.py _FIELDS_SamplingParams).
SAMPLING_FIELDS: dict[str, Callable[[Any], None]] = {
    "max_new_tokens": _int, "stop": _str_or_list, "stop_token_ids": _int64_list,
    "stop_regex": _str_or_list, "temperature": _float, "top_p": _float, "top_k": _int,
    "min_p": _float, "frequency_penalty": _float, "presence_penalty": _float,
    "repetition_penalty": _float, "min_new_tokens": _int, "n": _int, "json_schema": _str,
    "regex": _str, "ebnf": _str, "structural_tag": _str, "ignore_eos": _bool,
    "skip_special_tokens": _bool, "spaces_between_special_tokens": _bool, "no_stop_trim": _bool,
    "stream_interval": _int, "logit_bias": _map_of(_float), "sampling_seed": _int,
    "custom_params": _any, "beam_width": _int, "watermark": _watermark, "choice": _str_seq,
}

#: decode_GenerateRequest: its keys and kinds; any other key is ignored ("unknown keys ignored").
REQUEST_FIELDS: dict[str, Callable[[Any], None]] = {
    "rid": _str_or_list, "text": _str_or_list, "input_ids": _token_ids_or_list, "stream": _bool,
    "return_logprob": _bool_or_list, "logprob_start_len": _int64_or_list,
    "top_logprobs_num": _int64_or_list, "token_ids_logprob": _token_ids_or_list,
    "return_hidden_states": _bool_or_list, "return_text_in_logprobs": _bool,
    "bootstrap_host": _optional_str_or_list, "bootstrap_port": _optional_int64_or_list,
    "bootstrap_room": _optional_int64_or_list, "bootstrap_pair_key": _optional_str_or_list,
    "decode_tp_size": _optional_int64_or_list, "routed_dp_rank": _int,
    "disagg_prefill_dp_rank": _int, "image_data": _any, "mm_hashes": _str_list_or_list,
    "video_data": _any, "audio_data": _any, "extra_key": _str_or_list, "priority": _int,
    "cache_salt": _str_or_list, "require_reasoning": _bool, "lora_path": _optional_str_or_list,
    "session_params": _any, "kv_hints": _any, "routing_key": _str, "max_thinking_tokens": _uint,
    "session_id": _str, "custom_logit_processor": _optional_str_or_list,
    "custom_labels": _map_of(_str), "images_config": _any, "return_sampling_mask": _bool_or_list,
    "modalities": _optional_str_list,
}
#: Keys whose null is not "unset" (decode_GenerateRequest checks them without a None case).
_NOT_NULLABLE = {"return_prompt_token_ids": _bool, "routed_experts_start_len": _int}


def _unknown_field(key: str, fields: tuple[str, ...]) -> ContractError:
    # api_types.py _unknown_field: serde's text, the DENY policy's 400 body.
    if not fields:
        return ContractError(f"unknown field `{key}`, there are no fields")
    if len(fields) == 1:
        return ContractError(f"unknown field `{key}`, expected `{fields[0]}`")
    if len(fields) == 2:
        return ContractError(f"unknown field `{key}`, expected `{fields[0]}` or `{fields[1]}`")
    listed = ", ".join(f"`{f}`" for f in fields)
    return ContractError(f"unknown field `{key}`, expected one of {listed}")


def check_sampling_params(value: Any, expected: str = "struct SamplingParams") -> None:
    for key, x in _map(value, expected).items():
        check = SAMPLING_FIELDS.get(key)
        if check is None:
            raise _unknown_field(key, tuple(SAMPLING_FIELDS))
        if x is not None:
            check(x)


def check_generate_body(body: Any) -> None:
    """Raise :class:`ContractError` with SGLang's text if ``body`` breaks the contract."""
    for key, x in _map(body, "struct GenerateRequest").items():
        if key in _NOT_NULLABLE:
            _NOT_NULLABLE[key](x)
        elif key == "sampling_params":
            if isinstance(x, list):
                for e in x:
                    check_sampling_params(e)
            elif x is not None:
                check_sampling_params(x, "a value or an array of values for SamplingParamsOrList")
        elif x is not None and key in REQUEST_FIELDS:
            REQUEST_FIELDS[key](x)
