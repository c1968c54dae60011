"""Request bodies of SGLang's native and OpenAI-compatible APIs, read into one :class:`GenSpec`.

Field names and defaults follow SGLang 0.5.x (``srt/managers/io_struct.py`` GenerateReqInput and
``srt/entrypoints/openai/protocol.py``): ``max_new_tokens`` defaults to 128 on ``/generate``,
``max_tokens`` to 16 on ``/v1/completions``; ``temperature`` defaults to 1.0. A malformed body
raises :class:`BadRequest` (HTTP 400 with ``{"error": {"message": ...}}``, as SGLang answers).
"""

from __future__ import annotations

from dataclasses import dataclass


class BadRequest(ValueError):
    """A request body SGLang would reject with HTTP 400."""


@dataclass(frozen=True)
class GenSpec:
    """One prompt to generate for."""

    text: str | None
    input_ids: list[int] | None
    max_new_tokens: int
    temperature: float
    ignore_eos: bool
    #: what acceptance is judged on when it differs from ``text`` (a chat request: the messages'
    #: content without the template)
    acceptance_text: str | None = None

    @property
    def greedy(self) -> bool:
        return self.temperature <= 0


def _int_field(params: dict, key: str, default: int) -> int:
    value = params.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise BadRequest(f"{key} must be a non-negative integer, got {value!r}")
    return value


def _float_field(params: dict, key: str, default: float) -> float:
    value = params.get(key, default)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
        raise BadRequest(f"{key} must be a non-negative number, got {value!r}")
    return float(value)


def _sampling(params, default_max: int, max_key: str = "max_new_tokens") -> tuple[int, float, bool]:
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise BadRequest("sampling_params must be an object")
    return (_int_field(params, max_key, default_max), _float_field(params, "temperature", 1.0),
            bool(params.get("ignore_eos", False)))


def _is_id_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in value)


def parse_generate(body) -> tuple[list[GenSpec], bool, bool, str | None]:
    """``POST /generate`` -> (prompts, batch, stream, rid). ``batch`` is True for list input."""
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    text, ids = body.get("text"), body.get("input_ids")
    if (text is None) == (ids is None):
        raise BadRequest("Either text or input_ids should be provided.")
    if text is not None:
        batch = isinstance(text, list)
        texts = text if batch else [text]
        if not texts or not all(isinstance(t, str) for t in texts):
            raise BadRequest("text must be a string or a non-empty list of strings")
        prompts = [(t, None) for t in texts]
    else:
        batch = bool(ids) and isinstance(ids[0], list) if isinstance(ids, list) else False
        lists = ids if batch else [ids]
        if not lists or not all(_is_id_list(x) and x for x in lists):
            raise BadRequest("input_ids must be a non-empty list of token ids (or a list of such lists)")
        prompts = [(None, x) for x in lists]
    params = body.get("sampling_params")
    per_prompt = params if isinstance(params, list) else [params] * len(prompts)
    if len(per_prompt) != len(prompts):
        raise BadRequest("sampling_params list must have one entry per prompt")
    specs = [GenSpec(t, i, *_sampling(p, 128)) for (t, i), p in zip(prompts, per_prompt)]
    stream = bool(body.get("stream", False))
    if stream and batch:
        raise BadRequest("the simulated server streams single prompts only; send one request per prompt")
    rid = body.get("rid") if isinstance(body.get("rid"), str) else None
    return specs, batch, stream, rid


def _openai_common(body) -> tuple[int | None, float, bool, bool, dict]:
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    max_tokens = body.get("max_completion_tokens", body.get("max_tokens"))
    temperature = _float_field(body, "temperature", 1.0)
    stream = bool(body.get("stream", False))
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise BadRequest("stream_options must be an object")
    return max_tokens, temperature, bool(body.get("ignore_eos", False)), stream, options


def parse_completion(body) -> tuple[GenSpec, bool, dict]:
    """``POST /v1/completions`` -> (prompt, stream, stream_options)."""
    max_tokens, temperature, ignore_eos, stream, options = _openai_common(body)
    prompt = body.get("prompt")
    if isinstance(prompt, list) and len(prompt) == 1 and isinstance(prompt[0], str):
        prompt = prompt[0]
    if isinstance(prompt, str):
        text, ids = prompt, None
    elif _is_id_list(prompt) and prompt:
        text, ids = None, prompt
    else:
        raise BadRequest("prompt must be a string or a list of token ids (one prompt per request)")
    n = _int_field({"max_tokens": max_tokens}, "max_tokens", 16)
    return GenSpec(text, ids, n, temperature, ignore_eos), stream, options


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


def chat_prompt(messages) -> str:
    """The chat template stand-in: ``role: content`` lines plus the assistant turn."""
    if not isinstance(messages, list) or not messages:
        raise BadRequest("messages must be a non-empty list")
    lines = []
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str):
            raise BadRequest("each message needs a role and content")
        content = m.get("content", "")
        if isinstance(content, list):  # content parts: keep the text ones
            content = " ".join(p.get("text", "") for p in content if isinstance(p, dict))
        lines.append(f"{m['role']}: {content}")
    return "\n".join(lines) + "\nassistant:"


def parse_chat(body) -> tuple[GenSpec, bool, dict]:
    """``POST /v1/chat/completions`` -> (prompt, stream, stream_options)."""
    max_tokens, temperature, ignore_eos, stream, options = _openai_common(body)
    text = chat_prompt(body.get("messages"))
    # SGLang's chat default: generate up to the context length; the simulator caps it at 128.
    n = _int_field({"max_tokens": max_tokens}, "max_tokens", 128)
    return GenSpec(text, None, n, temperature, ignore_eos, chat_content(body["messages"])), stream, options
