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
   then ``SamplingParams(...)`` and ``verify()`` (``srt/sampling/sampling_params.py``), then the
   scheduler's context rules (:mod:`tuner.sim.context`: a request near the context is cut or refused). A
   ``ValueError`` is 400: ``{"error": {"message": ...}}`` on ``/generate``
   (``_create_error_response``, line 2246), ``ErrorResponse`` with type ``BadRequestError`` on the
   OpenAI routes (``serving_base.py`` ``create_error_response``).

What SGLang serves and the simulator cannot (stop strings, logprobs, constrained decoding, media,
LoRA on a server with LoRA on, sessions, beam search, echo) is refused at step 3 with a message that
says so, in that step's shape: a wrong answer is never given silently. ``n`` and batched prompts are
served, streamed or not (``n`` as SGLang's parallel sampling: ``prompts x n`` outputs,
prompt-major).

This module runs the steps in order and builds what the server runs (:class:`ParsedRequest`); step
1's models and error bodies live in :mod:`tuner.sim.request_models`, step 3's sampling parameters
in :mod:`tuner.sim.sampling_params`.

Why one module of over 400 lines: the three routes share one order of checks, and that order is
what the module is for: the request ids, LoRA, context and sampling checks interleave with each
route's own normalization in the sequence SGLang's tokenizer manager runs them, so splitting the
steps across modules would scatter the one sequence a reader must check against SGLang's source.
"""


from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, replace

from .context import ContextCheck
from .contract import ContractError, check_generate_body
from .request_models import (
    CHAT,
    COMPLETION,
    GENERATE,
    MEDIA_PART_TYPES,
    ApiError,
    GenerateReqInput,
    internal_server_error,
    native_error,
    openai_error,
    read_body,
    require_json_content_type,
    validate_body,
)
from .sampling_params import refuse_sampling_features, resolve_sampling, unsupported

#: The chat route's max_tokens when none is given: SGLang generates until EOS, which the synthetic
#: text never produces, so the simulator stops here instead (documented in the README).
CHAT_DEFAULT_MAX_TOKENS = 128

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
    #: the request id the client chose for this output (None: the server draws one)
    rid: str | None = None


@dataclass(frozen=True)
class ParsedRequest:
    specs: list[GenSpec]
    batch: bool  #: the reply is a list (several prompts, or n > 1)
    stream: bool
    n: int = 1
    options: dict | None = None  #: OpenAI stream_options
    model: str | None = None
    #: OpenAI ``return_spec_tokens_details``: add ``sglext.spec_tokens_details`` to the answer
    spec_details: bool = False


@dataclass(frozen=True)
class Served:
    """What of the server's configuration a request is checked against besides the context: the
    served model name, whether LoRA is on (``enable_lora``, or unset with ``--lora-paths``:
    arg_groups/lora_hook.py ``check_lora_server_args`` lines 38-43) and the preferred sampling
    parameters."""

    model_name: str | None = None
    lora_enabled: bool = False
    #: ``--preferred-sampling-params`` (resolved to a dict): defaults under a request's own sampling
    #: params (tokenizer_manager.py ``_create_tokenized_object``, lines 1549-1552)
    preferred: dict | None = None
    #: the ids of the requests in flight (the server's live set; SGLang's ``rid_to_state``)
    in_flight: Container[str] = frozenset()


def _request_ids(rid, batch: bool, n_prompts: int, n: int, served: Served) -> list[str | None]:
    """Each output's request id (prompt-major), as SGLang 0.5.23 names them: one output keeps the
    client's ``rid``; a batch's are ``rid_0``, ``rid_1`` ... for a string, the list's own for a list
    (which must have one per prompt), io_struct.py ``_normalize_rid`` (lines 759-774), and must be
    unique (``_validate_rid_uniqueness``, lines 390-397); with ``n > 1`` every sample gets a fresh
    one (tokenizer_manager.py ``regenerate_rid``, line 2174). None of the client's ids may be in
    flight (tokenizer_manager.py ``_init_req_state``, lines 3834-3837). Raises ``ValueError``."""
    if rid is None:
        return [None] * (n_prompts * n)
    if not batch:
        ids = [rid]
    elif isinstance(rid, str):
        ids = [f"{rid}_{i}" for i in range(n_prompts * n)]
    else:
        if len(rid) != n_prompts:
            raise ValueError("The specified rids length mismatch with the batch_size for batch processing.")
        ids = list(rid)
        seen, dups = set(), []
        for r in ids:
            if r in seen and r not in dups:
                dups.append(r)
            seen.add(r)
        if dups:
            raise ValueError(f"Duplicate request IDs detected within the request: {dups}")
    for r in ids:
        if r in served.in_flight:
            raise ValueError(f"Duplicate request ID detected: {r}")
    if n > 1:
        return [None] * (n_prompts * n)
    return ids


def _adapter_in_model(model: str, served: Served) -> str | None:
    """serving_base.py ``_parse_model_parameter`` (lines 40-60): ``base-model:adapter-name`` names a
    LoRA adapter, unless the whole name is the served model's."""
    if ":" not in model or model == served.model_name:
        return None
    if served.model_name and model.startswith(f"{served.model_name}:"):
        adapter = model[len(served.model_name) + 1:]
    else:
        adapter = model.split(":", 1)[1]
    return adapter.strip() or None


def _check_lora(lora_path, served: Served) -> None:
    """tokenizer_manager.py ``_validate_and_resolve_lora`` (lines 3723-3742), before tokenizing (so
    before the context-length and sampling checks): without LoRA, SGLang's ``ValueError``; with it,
    the simulator's refusal (it has no adapters to run)."""
    if not lora_path:
        return
    if not served.lora_enabled:
        first = lora_path if isinstance(lora_path, str) else next((a for a in lora_path if a), None)
        raise ValueError(f"LoRA adapter '{first}' was requested, but LoRA is not enabled. Please launch the "
                         "server with --enable-lora flag and preload adapters using --lora-paths or "
                         "/load_lora_adapter endpoint.")
    raise unsupported("LoRA adapters")


def _expand(prompts: list[tuple[str | None, list[int] | None]], per_prompt: list[dict],
            n: int, limits: ContextCheck, own_max: list | None = None,
            rids: list[str | None] | None = None) -> list[GenSpec]:
    """The outputs to generate, after SGLang's per-prompt checks in its order
    (tokenizer_manager.py ``_tokenize_one_request``): the context check first (line 1271), then
    ``SamplingParams(...).verify()`` (line 1272, via ``_create_tokenized_object``), then the
    simulator's own refusals, then the scheduler's (:meth:`ContextCheck.served_max`). The total check
    reads the max_new_tokens the request itself set (``own_max[i]``; default: ``per_prompt[i]``'s), line
    1354: when it set none, or null, there is no total check. Either way the scheduler clamps the output
    to what the context has left (scheduler.py ``init_req_max_new_tokens``)."""
    specs = []
    for i, ((text, ids), params) in enumerate(zip(prompts, per_prompt)):
        n_in = len(ids) if ids is not None else limits.count_tokens(text)
        limits.check_counts(n_in, params.get("max_new_tokens") if own_max is None else own_max[i])
        sampling = resolve_sampling(params)
        refuse_sampling_features(params)  # after verify(), whose errors SGLang answers first
        max_new = limits.served_max(n_in, sampling.max_new_tokens)
        for j in range(n):
            specs.append(GenSpec(text, ids, max_new, sampling.greedy, sampling.ignore_eos, index=i * n + j,
                                 rid=rids[i * n + j] if rids else None))
    return specs


def parse_generate(raw: bytes, content_type: str | None, limits: ContextCheck,
                   served: Served = Served()) -> ParsedRequest:
    """``POST /generate``: raises :class:`ApiError` with SGLang's status and body."""
    body = read_body(raw, content_type, "/generate")
    obj = validate_body(GENERATE, body, "/generate")
    try:
        check_generate_body(body)
    except ContractError as exc:
        raise ApiError(400, {"error": str(exc)}) from None
    try:
        return _normalize_generate(obj, body, limits, served)
    except ValueError as exc:
        error = native_error(str(exc))
        error.in_stream = obj.stream is True  # the checks run inside SGLang's streaming response
        raise error from None


def _normalize_generate(obj: GenerateReqInput, body: dict, limits: ContextCheck, served: Served) -> ParsedRequest:
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
        raise unsupported("input_embeds")
    params = obj.sampling_params
    if isinstance(params, list):
        # SGLang has no length check on a list of sampling_params; what happens is what its
        # indexing does. An empty list: _handle_parallel_sampling reads sampling_params[0]
        # (io_struct.py line 540), an IndexError.
        if not params:
            raise internal_server_error()
        n = params[0].get("n", 1)
        if any(p.get("n", 1) != n for p in params):
            raise ValueError("The parallel_sample_num should be the same for all samples in sample params.")
        if n is None:
            raise internal_server_error()  # _handle_parallel_sampling's None > 1: a TypeError
        if not batch and n <= 1:
            # One prompt stays single and keeps the list: _validate_one_request's
            # obj.sampling_params.get(...) (tokenizer_manager.py line 1354) is an AttributeError.
            raise internal_server_error()
        if len(params) < len(prompts):
            # _normalize_sampling_params (io_struct.py line 747) repeats the list n times, the
            # prompts too; _init_req_state (tokenizer_manager.py lines 3820-3831) takes obj[i] for
            # every output, and __getitem__'s sampling_params[i] (io_struct.py line 982) runs out.
            raise internal_server_error()
        # A longer list: prompt i is built from obj[i] (tokenizer_manager.py lines 2091, 2125),
        # so it takes params[i] and the extras are never read (nor verified).
        per_prompt = [dict(p) for p in params[:len(prompts)]]
    else:
        per_prompt = [dict(params or {}) for _ in prompts]
        n = (params or {}).get("n", 1)
    # _handle_parallel_sampling (io_struct.py lines 531-552) compares n with 1 as sent: a null n is
    # a TypeError (None > 1), a 500; n <= 0 is no parallel sampling: one prompt stays single with
    # one output (SamplingParams never checks n), a batch is expanded n times over (below)
    if n is None:
        raise internal_server_error()
    emptied = batch and n < 1
    n = max(n, 1)
    if n > 1:
        batch = True  # _handle_parallel_sampling turns a single prompt with n > 1 into a batch
    if obj.return_logprob or obj.top_logprobs_num or obj.token_ids_logprob:
        raise unsupported("logprobs (return_logprob, top_logprobs_num, token_ids_logprob)")
    if obj.return_hidden_states:
        raise unsupported("hidden states (return_hidden_states)")
    if obj.image_data is not None or obj.video_data is not None or obj.audio_data is not None:
        raise unsupported("multimodal inputs (image_data, video_data, audio_data)")
    rids = _request_ids(obj.rid, batch, len(prompts), n, served)
    _check_lora(obj.lora_path, served)
    if obj.session_params or obj.custom_logit_processor:
        raise unsupported("sessions and custom logit processors")
    if emptied:
        # _normalize_batch_inputs repeats the prompts n <= 0 times (text * n: none left), and
        # tokenizer_manager.py _handle_batch_request's obj[i] (line 2125) is an IndexError: a 500
        raise internal_server_error()
    # the preferred params go under the request's own when its SamplingParams are built (after n was
    # read and the context checked against the request's own max_new_tokens)
    merged = [{**(served.preferred or {}), **p} for p in per_prompt]
    return ParsedRequest(_expand(prompts, merged, n, limits, [p.get("max_new_tokens") for p in per_prompt], rids),
                         batch, obj.stream, n)


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
                  chat: bool, served: Served) -> ParsedRequest:
    require_json_content_type(content_type, endpoint)
    body = read_body(raw, content_type, endpoint)
    req = validate_body(CHAT if chat else COMPLETION, body, endpoint)
    # OpenAIServingBase.handle_request: _validate_request's message is a 400 BadRequestError.
    if chat:
        if not req.messages:
            raise openai_error("Messages cannot be empty.")
        messages = [m.model_dump() for m in req.messages]  # validated as protocol.py's models
        # serving_chat.py _validate_media_content (lines 1199-1219), next in _validate_request: SGLang
        # refuses media on a text-only model and serves it on a multimodal one; the simulator has
        # neither, so it refuses either way (the text parts alone would be a wrong answer)
        media = next((part["type"] for m in messages if isinstance(m["content"], list)
                      for part in m["content"] if part["type"] in MEDIA_PART_TYPES), None)
        if media is not None:
            raise openai_error(str(unsupported(f"multimodal inputs (content part type '{media}')")))
        # serving_chat.py _validate_request (lines 1180-1190) and protocol.py to_sampling_params (line
        # 1214) both read ``max_completion_tokens or max_tokens``: a 0 falls through to max_tokens.
        # The limit is the server's resolved context length, checked before the tokenizer manager's
        # input + output check (allow_auto_truncate off, SGLang's default).
        max_tokens = req.max_completion_tokens or req.max_tokens
        if max_tokens and max_tokens > limits.context_len:
            raise openai_error(f"max_completion_tokens is too large: {max_tokens}.This model supports at "
                               f"most {limits.context_len} completion tokens.")
        prompts = [(chat_prompt(messages), None)]
        own_max = max_tokens  # None: no total check in SGLang; the simulator's default, clamped
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
        max_tokens = own_max = req.max_tokens
    try:
        batch = len(prompts) > 1 or req.n > 1
        # the request's rid goes into GenerateReqInput (serving_completions.py line 134): named as
        # /generate's
        rids = _request_ids(req.rid, batch, len(prompts), max(1, req.n), served)
        # serving_base.py _resolve_lora_path: an adapter named in "model" wins over lora_path
        _check_lora(_adapter_in_model(req.model, served) or req.lora_path, served)
        if req.logprobs or (chat and req.top_logprobs):
            raise unsupported("logprobs")
        if not chat and req.echo:
            raise unsupported("echo")
        if req.return_hidden_states or req.session_params or req.custom_logit_processor:
            raise unsupported("hidden states, sessions and custom logit processors")
        params = _openai_sampling(req, max_tokens)
        specs = _expand(prompts, [params] * len(prompts), max(1, req.n), limits,
                        [own_max] * len(prompts), rids)
        if chat:  # a chat request drafts like its messages' content, not like the template
            specs = [replace(s, acceptance_text=chat_content(messages)) for s in specs]
    except ValueError as exc:
        # serving_completions.py _handle_non_streaming_request (and the stream's kick-start):
        # create_error_response(str(e)).
        raise openai_error(str(exc)) from None
    options = req.stream_options.model_dump() if req.stream_options else {}
    return ParsedRequest(specs, batch, req.stream, req.n, options, req.model,
                         bool(req.return_spec_tokens_details))


def parse_completion(raw: bytes, content_type: str | None, limits: ContextCheck,
                     served: Served = Served()) -> ParsedRequest:
    """``POST /v1/completions``: raises :class:`ApiError` with SGLang's status and body."""
    return _parse_openai(raw, content_type, "/v1/completions", limits, False, served)


def parse_chat(raw: bytes, content_type: str | None, limits: ContextCheck,
               served: Served = Served()) -> ParsedRequest:
    """``POST /v1/chat/completions``: raises :class:`ApiError` with SGLang's status and body."""
    return _parse_openai(raw, content_type, "/v1/chat/completions", limits, True, served)


def chat_content(messages: list) -> str:
    """The messages' content alone, one paragraph per turn (the same text the tuner sends to
    ``/generate`` for a chat request, so both APIs draft alike on the same request)."""
    return "\n\n".join(_content_text(m) for m in messages)


def _content_text(message: dict) -> str:
    """A message's text: its content, or its text parts joined (an assistant turn may have none)."""
    content = message.get("content")
    if isinstance(content, list):  # content parts: keep the text ones
        content = " ".join(p.get("text") or "" for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def chat_prompt(messages: list) -> str:
    """The chat template stand-in: ``role: content`` lines plus the assistant turn."""
    lines = [f"{m.get('role', 'user')}: {_content_text(m)}" for m in messages]
    return "\n".join(lines) + "\nassistant:"
