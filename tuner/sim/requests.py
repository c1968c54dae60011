"""What a client sends, checked in SGLang 0.5.23's order, with SGLang's status codes and bodies.

One request body goes through the layers SGLang's does, and fails at the first that refuses it:

1. **FastAPI** (``srt/entrypoints/http_server.py``): the OpenAI routes first require
   ``Content-Type: application/json`` (``validate_json_request``, line 695); the body is parsed as
   JSON only with a JSON content type, then validated into ``GenerateReqInput`` (a dataclass,
   ``srt/managers/io_struct.py``) or ``CompletionRequest`` / ``ChatCompletionRequest`` (pydantic,
   ``srt/entrypoints/openai/protocol.py``). A failure is 400 with ``ErrorResponse``:
   ``{"object": "error", "message": "N validation error(s): ...", "type": "Bad Request", "param":
   null, "code": 400}`` (``validation_exception_handler``, line 636). Pydantic itself produces the
   error entries here, as it does in SGLang, so types are coerced (``"stream": "yes"`` passes this
   layer) exactly as there.
2. **The JSON contract** (``/generate`` only): :mod:`tuner.sim.contract`, 400 ``{"error": "..."}``.
3. **The tokenizer manager** (``srt/managers/tokenizer_manager.py``): batch normalization
   (``io_struct.py`` ``normalize_batch_and_arguments``), the context-length check
   (``_validate_one_request``, line 1307; the input plus EAGLE's reserved draft slots, line 605),
   then ``SamplingParams(...)`` and ``verify()`` (``srt/sampling/sampling_params.py``). A
   ``ValueError`` is 400: ``{"error": {"message": ...}}`` on ``/generate``
   (``_create_error_response``, line 2246), ``ErrorResponse`` with type ``BadRequestError`` on the
   OpenAI routes (``serving_base.py`` ``create_error_response``).

What SGLang serves and the simulator cannot (stop strings, logprobs, constrained decoding, media,
LoRA, sessions, beam search, echo, streamed batches) is refused at step 3 with a message that says
so, in that step's shape: a wrong answer is never given silently. ``n`` and batched prompts are
served (``n`` as SGLang's parallel sampling: ``prompts x n`` outputs, prompt-major).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import Any, Dict, List, Literal, Optional, Union

import pydantic
from pydantic import BaseModel, ConfigDict, TypeAdapter, field_validator

from .contract import ContractError, check_generate_body

#: Where FastAPI's messages say the endpoint is (the installed file's path differs per machine).
_HTTP_SERVER = "sglang/srt/entrypoints/http_server.py"
_ENDPOINTS = {"/generate": (933, "generate_request"),
              "/v1/completions": (1861, "openai_v1_completions"),
              "/v1/chat/completions": (1871, "openai_v1_chat_completions")}
#: sampling_params.py _SAMPLING_EPS and TOP_K_ALL.
_SAMPLING_EPS = 1e-6
TOP_K_ALL = 1 << 30
#: The chat route's max_tokens when none is given: SGLang generates until EOS, which the synthetic
#: text never produces, so the simulator stops here instead (documented in the README).
CHAT_DEFAULT_MAX_TOKENS = 128


class ApiError(Exception):
    """A request SGLang answers with ``status`` and the JSON ``body``."""

    def __init__(self, status: int, body: dict):
        super().__init__(json.dumps(body))
        self.status, self.body = status, body


def validation_error(errors: list, endpoint: str, method: str = "POST") -> ApiError:
    """FastAPI's ``RequestValidationError`` as SGLang's handler renders it: ``str(exc)`` (FastAPI's
    ``ValidationException.__str__``, with the endpoint's file, line and route), then the error
    list (``http_server.py`` lines 669-690)."""
    line, function = _ENDPOINTS[endpoint]
    n = len(errors)
    text = f"{n} validation error{'s' if n != 1 else ''}:\n" + "".join(f"  {e}\n" for e in errors)
    text += f'\n  File "{_HTTP_SERVER}", line {line}, in {function}\n    {method} {endpoint}'
    message = f"{text.rstrip()} {errors}"
    return ApiError(400, {"object": "error", "message": message, "type": "Bad Request",
                          "param": None, "code": 400})


def native_error(message: str, status: int = 400) -> ApiError:
    """``/generate``'s ``ValueError`` answer (http_server.py ``_create_error_response``)."""
    return ApiError(status, {"error": {"message": message}})


def openai_error(message: str, err_type: str = "BadRequestError", status: int = 400) -> ApiError:
    """``OpenAIServingBase.create_error_response`` (serving_base.py)."""
    return ApiError(status, {"object": "error", "message": message, "type": err_type,
                             "param": None, "code": status})


# ---------------------------------------------------------------------------------------------
# 1. FastAPI: content type, JSON, the request model


def _reject_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")  # orjson refuses NaN and Infinity too


def read_body(raw: bytes, content_type: str | None, endpoint: str) -> Any:
    """FastAPI's body handling: JSON only under a JSON content type, else the raw bytes (which the
    model then refuses); an empty body is missing."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    is_json = media == "application/json" or (media.startswith("application/") and media.endswith("+json"))
    if not raw:
        return None
    if not is_json:
        return raw
    try:
        return json.loads(raw, parse_constant=_reject_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        pos = getattr(exc, "pos", 0)
        msg = getattr(exc, "msg", str(exc))
        raise validation_error([{"type": "json_invalid", "loc": ("body", pos), "msg": "JSON decode error",
                                 "input": {}, "ctx": {"error": msg}}], endpoint) from None


def require_json_content_type(content_type: str | None, endpoint: str) -> None:
    """``validate_json_request`` (http_server.py line 695), the OpenAI routes' dependency."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media != "application/json":
        raise validation_error([{"loc": ["header", "content-type"],
                                 "msg": "Unsupported Media Type: Only 'application/json' is allowed",
                                 "type": "value_error"}], endpoint)


def _validate(adapter: TypeAdapter, body: Any, endpoint: str):
    if body is None:
        raise validation_error([{"type": "missing", "loc": ("body",), "msg": "Field required",
                                 "input": None}], endpoint)
    try:
        return adapter.validate_python(body)
    except pydantic.ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
        raise validation_error(errors, endpoint) from None


@pydantic.dataclasses.dataclass
class GenerateReqInput:
    """The fields of SGLang's ``GenerateReqInput`` (io_struct.py line 177) the simulator reads or
    refuses, with SGLang's annotations, so pydantic validates them as FastAPI does there."""

    text: Optional[Union[List[str], str]] = None
    input_ids: Any = None  # SGLang: a C-loop PlainValidator; the contract checks the ints
    input_embeds: Optional[Union[List[List[List[float]]], List[List[float]]]] = None
    sampling_params: Optional[Union[List[Dict[str, Any]], Dict[str, Any]]] = None
    rid: Optional[Union[str, List[str]]] = None
    stream: bool = False
    return_logprob: Optional[Union[List[bool], bool]] = None
    top_logprobs_num: Optional[Union[List[int], int]] = None
    token_ids_logprob: Optional[Union[List[List[int]], List[int]]] = None
    return_hidden_states: Any = False
    image_data: Any = None
    video_data: Any = None
    audio_data: Any = None
    lora_path: Optional[Union[List[Optional[str]], str]] = None
    session_params: Optional[Dict[str, Any]] = None
    custom_logit_processor: Optional[Union[List[Optional[str]], str]] = None


_GENERATE = TypeAdapter(GenerateReqInput)


class StreamOptions(BaseModel):
    include_usage: Optional[bool] = False
    continuous_usage_stats: Optional[bool] = False


class _OpenAIBase(BaseModel):
    # protocol.py's models are plain BaseModels: unknown keys are ignored.
    model_config = ConfigDict(extra="ignore")

    model: str = "default"
    frequency_penalty: float = 0.0
    presence_penalty: float = 0.0
    logit_bias: Optional[Dict[str, float]] = None
    n: int = 1
    seed: Optional[int] = None
    stop: Optional[Union[str, List[str]]] = None
    stream: bool = False
    stream_options: Optional[StreamOptions] = None
    top_k: int = -1
    min_p: float = 0.0
    repetition_penalty: float = 1.0
    stop_token_ids: Optional[List[int]] = None
    stop_regex: Optional[Union[str, List[str]]] = None
    ignore_eos: bool = False
    json_schema: Optional[str] = None
    regex: Optional[str] = None
    ebnf: Optional[str] = None
    response_format: Optional[Dict[str, Any]] = None
    return_hidden_states: Union[bool, Literal["last"]] = False
    return_spec_tokens_details: bool = False  # protocol.py: sglext.spec_tokens_details on request
    lora_path: Optional[Union[List[Optional[str]], Optional[str]]] = None
    session_params: Optional[Dict] = None
    custom_logit_processor: Optional[str] = None


class CompletionRequest(_OpenAIBase):
    """protocol.py line 365 (the fields the simulator reads or refuses)."""

    prompt: Union[List[int], List[List[int]], str, List[str]]
    echo: bool = False
    logprobs: Optional[int] = None
    max_tokens: int = 16
    min_tokens: int = 0
    temperature: float = 1.0
    top_p: float = 1.0
    suffix: Optional[str] = None

    @field_validator("max_tokens")
    @classmethod
    def validate_max_tokens_positive(cls, v):
        if v is not None and v <= 0:
            raise ValueError("max_tokens must be positive")
        return v


class ChatCompletionRequest(_OpenAIBase):
    """protocol.py ``ChatCompletionRequest`` (the fields the simulator reads or refuses)."""

    messages: List[Dict[str, Any]]
    logprobs: bool = False
    top_logprobs: Optional[int] = None
    max_tokens: Optional[int] = None
    max_completion_tokens: Optional[int] = None
    min_tokens: int = 0
    temperature: Optional[float] = None
    top_p: Optional[float] = None
    tools: Optional[List[Any]] = None


_COMPLETION = TypeAdapter(CompletionRequest)
_CHAT = TypeAdapter(ChatCompletionRequest)


# ---------------------------------------------------------------------------------------------
# 3. Sampling parameters: SamplingParams.__post_init__ and verify() (sampling_params.py)


@dataclass(frozen=True)
class Sampling:
    """Resolved sampling parameters of one output."""

    max_new_tokens: int | None  #: None: until the context is full (an explicit null)
    greedy: bool
    ignore_eos: bool
    n: int


def resolve_sampling(params: dict) -> Sampling:
    """``SamplingParams(**params)``, its ``__post_init__`` and ``verify()``: raises ``ValueError``
    with SGLang's message for a value out of range (sampling_params.py lines 232-299)."""
    def value(key, default):
        v = params.get(key)
        return default if v is None else v

    # Values stay as sent (a JSON 0 is the int 0): SGLang's messages print them that way.
    temperature = value("temperature", 1.0)
    top_p = value("top_p", 1.0)
    top_k = params.get("top_k")
    top_k = TOP_K_ALL if top_k is None else top_k  # __post_init__: null is the whole vocabulary
    greedy = 0 <= temperature < _SAMPLING_EPS
    if greedy:  # top_k = 1 means greedy sampling
        temperature, top_k = 1.0, 1
    if top_k == -1:
        top_k = TOP_K_ALL
    min_p = value("min_p", 0.0)
    frequency_penalty = value("frequency_penalty", 0.0)
    presence_penalty = value("presence_penalty", 0.0)
    repetition_penalty = value("repetition_penalty", 1.0)
    min_new_tokens = value("min_new_tokens", 0)
    max_new_tokens = params["max_new_tokens"] if "max_new_tokens" in params else 128
    beam_width = params.get("beam_width")
    if beam_width is not None and beam_width < 1:
        raise ValueError(f"beam_width must be at least 1, got {beam_width}.")
    if not math.isfinite(temperature) or temperature < 0.0:
        raise ValueError(f"temperature must be a non-negative finite number, got {temperature}.")
    if not 0.0 < top_p <= 1.0:
        raise ValueError(f"top_p must be in (0, 1], got {top_p}.")
    if not 0.0 <= min_p <= 1.0:
        raise ValueError(f"min_p must be in [0, 1], got {min_p}.")
    if top_k < 1 or top_k == -1:
        raise ValueError(f"top_k must be -1 (disable) or at least 1, got {top_k}.")
    if not -2.0 <= frequency_penalty <= 2.0:
        raise ValueError(f"frequency_penalty must be in [-2, 2], got {frequency_penalty}.")
    if not -2.0 <= presence_penalty <= 2.0:
        raise ValueError(f"presence_penalty must be in [-2, 2], got {presence_penalty}.")
    if not 0.0 < repetition_penalty <= 2.0:
        raise ValueError("repetition_penalty must be in (0, 2] (1.0 = no penalty), "
                         f"got {repetition_penalty}.")
    if not 0 <= min_new_tokens:
        raise ValueError(f"min_new_tokens must be in [0, max_new_tokens], got {min_new_tokens}.")
    if max_new_tokens is not None:
        if max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be at least 0, got {max_new_tokens}.")
        if not min_new_tokens <= max_new_tokens:
            raise ValueError(f"min_new_tokens must be in [0, max_new_tokens({max_new_tokens})], got "
                             f"{min_new_tokens}.")
    grammars = [params.get(k) or None for k in ("json_schema", "regex", "ebnf", "structural_tag")]
    if sum(x is not None for x in grammars) > 1:
        raise ValueError("Only one of json_schema, regex, ebnf, or structural_tag can be set.")
    return Sampling(max_new_tokens, greedy, bool(value("ignore_eos", False)), int(value("n", 1)))


def _unsupported(what: str) -> ValueError:
    return ValueError(f"The simulated SGLang server does not implement {what} (SGLang 0.5.23 "
                      "serves it; the simulator refuses rather than answer wrongly).")


def _refuse_sampling_features(params: dict) -> None:
    if params.get("stop") or params.get("stop_token_ids") or params.get("stop_regex"):
        raise _unsupported("stop strings and stop tokens (stop, stop_token_ids, stop_regex)")
    if any(params.get(k) for k in ("json_schema", "regex", "ebnf", "structural_tag", "choice")):
        raise _unsupported("constrained decoding (json_schema, regex, ebnf, structural_tag, choice)")
    if (params.get("beam_width") or 1) > 1:
        raise _unsupported("beam search (beam_width)")


# ---------------------------------------------------------------------------------------------
# What the server runs


@dataclass(frozen=True)
class GenSpec:
    """One output to generate (a prompt x one of its ``n`` samples)."""

    text: str | None
    input_ids: list[int] | None
    max_new_tokens: int | None  #: None: up to the context length
    greedy: bool
    ignore_eos: bool
    index: int = 0  #: position in the reply (prompt-major: prompt i, sample j -> i * n + j)
    #: what acceptance is judged on when it differs from ``text`` (a chat request: the messages'
    #: content without the template around it)
    acceptance_text: str | None = None


@dataclass(frozen=True)
class ParsedRequest:
    specs: list[GenSpec]
    batch: bool  #: the reply is a list (several prompts, or n > 1)
    stream: bool
    rid: str | None
    n: int = 1
    options: dict | None = None  #: OpenAI stream_options
    model: str | None = None
    #: OpenAI ``return_spec_tokens_details``: add ``sglext.spec_tokens_details`` to the answer
    spec_details: bool = False


class ContextCheck:
    """SGLang's context-length check for one server (tokenizer_manager.py ``_validate_one_request``,
    lines 1307-1378, with ``allow_auto_truncate`` off, SGLang's default): ``reserved`` is
    ``compute_num_reserved_tokens()`` (managers/utils.py: EAGLE stores draft tokens in the output
    slots, so it reserves ``max(topk * steps, num_draft_tokens)`` per request)."""

    def __init__(self, context_len: int, reserved: int, count_tokens):
        self.context_len, self.reserved, self.count_tokens = context_len, reserved, count_tokens

    def check(self, spec: GenSpec) -> GenSpec:
        """Raises ``ValueError`` with SGLang's message; returns ``spec`` with an explicit null
        ``max_new_tokens`` resolved to what is left of the context."""
        n_in = (len(spec.input_ids) if spec.input_ids is not None else self.count_tokens(spec.text))
        n_in += self.reserved
        ctx = self.context_len
        if n_in >= ctx:
            raise ValueError(f"The input ({n_in} tokens) is longer than the model's context length "
                             f"({ctx} tokens).")
        m = spec.max_new_tokens
        if m is not None and m + n_in > ctx:
            raise ValueError(
                f"Requested token count exceeds the model's maximum context length of {ctx} tokens. "
                f"You requested a total of {m + n_in} tokens: {n_in} tokens from the input messages "
                f"and {m} tokens for the completion. Please reduce the number of tokens in the input "
                f"messages or the completion to fit within the limit.")
        if m is None:
            return replace(spec, max_new_tokens=ctx - n_in)
        return spec


def _expand(prompts: list[tuple[str | None, list[int] | None]], per_prompt: list[dict],
            n: int, limits: ContextCheck, explicit_max: bool = True) -> list[GenSpec]:
    specs = []
    for i, ((text, ids), params) in enumerate(zip(prompts, per_prompt)):
        sampling = resolve_sampling(params)
        _refuse_sampling_features(params)  # after verify(), whose errors SGLang answers first
        for j in range(n):
            spec = GenSpec(text, ids, sampling.max_new_tokens, sampling.greedy, sampling.ignore_eos,
                           index=i * n + j)
            specs.append(limits.check(spec) if explicit_max else spec)
    return specs


def parse_generate(raw: bytes, content_type: str | None, limits: ContextCheck) -> ParsedRequest:
    """``POST /generate``: raises :class:`ApiError` with SGLang's status and body."""
    body = read_body(raw, content_type, "/generate")
    obj = _validate(_GENERATE, body, "/generate")
    try:
        check_generate_body(body)
    except ContractError as exc:
        raise ApiError(400, {"error": str(exc)}) from None
    try:
        return _normalize_generate(obj, body, limits)
    except ValueError as exc:
        raise native_error(str(exc)) from None


def _normalize_generate(obj: GenerateReqInput, body: dict, limits: ContextCheck) -> ParsedRequest:
    # io_struct.py normalize_batch_and_arguments: _validate_inputs, _determine_batch_size,
    # _handle_parallel_sampling.
    if obj.text is None and obj.input_ids is None and obj.input_embeds is None:
        raise ValueError("Either text, input_ids or input_embeds should be provided.")
    if obj.text is not None:
        batch = not isinstance(obj.text, str)
        prompts = [(t, None) for t in (obj.text if batch else [obj.text])]
    elif obj.input_ids is not None:
        ids = obj.input_ids
        if len(ids) == 0:
            raise ValueError("input_ids cannot be empty.")
        batch = not isinstance(ids[0], int)
        prompts = [(None, list(x)) for x in (ids if batch else [ids])]
    else:
        raise _unsupported("input_embeds")
    params = obj.sampling_params
    if isinstance(params, list):
        n = params[0].get("n", 1) if params else 1
        if any(p.get("n", 1) != n for p in params):
            raise ValueError("The parallel_sample_num should be the same for all samples in sample params.")
        if len(params) != len(prompts):
            raise ValueError(f"The number of sampling_params ({len(params)}) must match the number "
                             f"of prompts ({len(prompts)}).")
        per_prompt = [dict(p) for p in params]
    else:
        per_prompt = [dict(params or {}) for _ in prompts]
        n = (params or {}).get("n", 1) or 1
    if n > 1:
        batch = True  # _handle_parallel_sampling turns a single prompt with n > 1 into a batch
    if obj.return_logprob or obj.top_logprobs_num or obj.token_ids_logprob:
        raise _unsupported("logprobs (return_logprob, top_logprobs_num, token_ids_logprob)")
    if obj.return_hidden_states:
        raise _unsupported("hidden states (return_hidden_states)")
    if obj.image_data is not None or obj.video_data is not None or obj.audio_data is not None:
        raise _unsupported("multimodal inputs (image_data, video_data, audio_data)")
    if obj.lora_path or obj.session_params or obj.custom_logit_processor:
        raise _unsupported("LoRA adapters, sessions and custom logit processors")
    if obj.stream and batch:
        raise _unsupported("streaming a batch (a list of prompts, or n > 1, with stream: true)")
    rid = obj.rid if isinstance(obj.rid, str) else None
    return ParsedRequest(_expand(prompts, per_prompt, n, limits), batch, obj.stream, rid, n)


def _openai_sampling(req, max_tokens) -> dict:
    """The sampling_params dict SGLang builds for an OpenAI request (serving_completions.py
    ``_build_sampling_params``; serving_chat.py is the same for the fields read here)."""
    params = {"temperature": req.temperature, "max_new_tokens": max_tokens, "min_new_tokens": req.min_tokens,
              "stop": req.stop, "stop_token_ids": req.stop_token_ids, "stop_regex": req.stop_regex,
              "top_p": req.top_p, "top_k": req.top_k, "min_p": req.min_p,
              "presence_penalty": req.presence_penalty, "frequency_penalty": req.frequency_penalty,
              "repetition_penalty": req.repetition_penalty, "regex": req.regex,
              "json_schema": req.json_schema, "ebnf": req.ebnf, "n": req.n,
              "ignore_eos": req.ignore_eos}
    if req.response_format and req.response_format.get("type") in ("json_schema", "json_object",
                                                                     "structural_tag"):
        params["json_schema"] = "response_format"
    return params


def _parse_openai(raw: bytes, content_type: str | None, endpoint: str, limits: ContextCheck,
                  chat: bool) -> ParsedRequest:
    require_json_content_type(content_type, endpoint)
    body = read_body(raw, content_type, endpoint)
    req = _validate(_CHAT if chat else _COMPLETION, body, endpoint)
    # OpenAIServingBase.handle_request: _validate_request's message is a 400 BadRequestError.
    if chat:
        if not req.messages:
            raise openai_error("Messages cannot be empty.")
        prompts = [(chat_prompt(req.messages), None)]
        max_tokens = req.max_completion_tokens if req.max_completion_tokens is not None else req.max_tokens
        if max_tokens is None:
            max_tokens = CHAT_DEFAULT_MAX_TOKENS
    else:
        prompt = req.prompt
        if not prompt or (isinstance(prompt, list) and all(not p for p in prompt)):
            raise openai_error("Prompt cannot be empty")
        if isinstance(prompt, str):
            prompts = [(prompt, None)]
        elif isinstance(prompt[0], str):
            prompts = [(p, None) for p in prompt]
        elif isinstance(prompt[0], int):
            prompts = [(None, list(prompt))]
        else:
            prompts = [(None, list(p)) for p in prompt]
        max_tokens = req.max_tokens
    try:
        if req.logprobs or (chat and req.top_logprobs):
            raise _unsupported("logprobs")
        if not chat and req.echo:
            raise _unsupported("echo")
        if req.return_hidden_states or req.lora_path or req.session_params or req.custom_logit_processor:
            raise _unsupported("hidden states, LoRA adapters, sessions and custom logit processors")
        params = _openai_sampling(req, max_tokens)
        batch = len(prompts) > 1 or req.n > 1
        if req.stream and batch:
            raise _unsupported("streaming several choices (a list of prompts, or n > 1, with stream)")
        specs = _expand(prompts, [params] * len(prompts), max(1, req.n), limits)
        if chat:  # a chat request drafts like its messages' content, not like the template
            specs = [replace(s, acceptance_text=chat_content(req.messages)) for s in specs]
    except ValueError as exc:
        # serving_completions.py _handle_non_streaming_request (and the stream's kick-start):
        # create_error_response(str(e)).
        raise openai_error(str(exc)) from None
    options = req.stream_options.model_dump() if req.stream_options else {}
    return ParsedRequest(specs, batch, req.stream, None, req.n, options, req.model,
                         bool(req.return_spec_tokens_details))


def parse_completion(raw: bytes, content_type: str | None, limits: ContextCheck) -> ParsedRequest:
    """``POST /v1/completions``: raises :class:`ApiError` with SGLang's status and body."""
    return _parse_openai(raw, content_type, "/v1/completions", limits, chat=False)


def parse_chat(raw: bytes, content_type: str | None, limits: ContextCheck) -> ParsedRequest:
    """``POST /v1/chat/completions``: raises :class:`ApiError` with SGLang's status and body."""
    return _parse_openai(raw, content_type, "/v1/chat/completions", limits, chat=True)


def chat_content(messages: list) -> str:
    """The messages' content alone, one paragraph per turn (the same text the tuner sends to
    ``/generate`` for a chat request, so both APIs draft alike on the same request)."""
    parts = []
    for m in messages:
        content = m.get("content", "")
        if isinstance(content, list):
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        parts.append(str(content))
    return "\n\n".join(parts)


def chat_prompt(messages: list) -> str:
    """The chat template stand-in: ``role: content`` lines plus the assistant turn."""
    lines = []
    for m in messages:
        content = m.get("content", "")
        if isinstance(content, list):  # content parts: keep the text ones
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        lines.append(f"{m.get('role', 'user')}: {content}")
    return "\n".join(lines) + "\nassistant:"
