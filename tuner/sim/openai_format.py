"""OpenAI-format bodies for ``/v1/completions`` and ``/v1/chat/completions``.

Shapes follow SGLang's ``srt/entrypoints/openai/protocol.py`` and ``serving_completions.py`` /
``serving_chat.py``: ``usage`` with ``prompt_tokens``, ``completion_tokens``, ``total_tokens``; in a
stream, ``stream_options.include_usage`` adds a last chunk with empty ``choices`` and the usage, and
``continuous_usage_stats`` puts the usage so far on every chunk. With
``return_spec_tokens_details: true`` a speculative server adds ``sglext.spec_tokens_details``: at
the top level of a complete answer, and in a stream as one chunk with ``choices: []`` after the
finish and before the usage chunk (``serving_chat.py``; ``utils.spec_tokens_details_from_meta_info``
builds it from ``/generate``'s meta_info figures, and there is none without speculation).

Keys and values as SGLang 0.5.23 serializes them: the answer's ``id`` is the request id of its
first output (``ret[0]["meta_info"]["id"]``: a bare ``uuid4().hex``, io_struct.py line 564), the
same in every chunk of a stream; a complete answer carries ``metadata: {"weight_version": ...}``;
``usage`` is ``UsageInfo`` whole (``reasoning_tokens`` 0, ``completion_tokens_details`` null), but
the completions route's last usage chunk drops the null fields (``exclude_none=True``); a chat
``message`` has no ``tool_calls`` key when there are none (``ChatMessage._serialize``).
"""

from __future__ import annotations

import time

#: meta_info keys ``utils.spec_tokens_details_from_meta_info`` copies (defaults 0 / [])
_SPEC_KEYS = {"spec_accept_rate": 0.0, "spec_accept_length": 0.0, "spec_cap_length": 0.0,
              "spec_block_accept_length": 0.0, "spec_num_correct_drafts": 0, "spec_num_proposed_drafts": 0,
              "spec_verify_ct": 0, "spec_correct_drafts_histogram": [], "spec_cap_lens_histogram": []}


def spec_tokens_details(meta: dict) -> dict | None:
    """SGLang's ``SpecTokensDetails`` from a request's meta_info; None when it has no spec figures."""
    if not any(k in meta for k in _SPEC_KEYS):
        return None
    return {k: meta.get(k) or default for k, default in _SPEC_KEYS.items()}


def usage(prompt_tokens: int, completion_tokens: int) -> dict:
    """``UsageInfo`` as ``usage_processor.py`` ``calculate_token_usage`` builds it (lines 121-132; the
    fields of protocol.py lines 221-229, in that order): no reasoning tokens, so
    ``completion_tokens_details`` is null; no cache report, so ``prompt_tokens_details`` is null."""
    return {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + completion_tokens,
            "completion_tokens": completion_tokens, "prompt_tokens_details": None, "reasoning_tokens": 0,
            "completion_tokens_details": None}


def _without_nulls(value):
    """pydantic's ``model_dump_json(exclude_none=True)``: null fields dropped, at every level."""
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


class OpenAIFormatter:
    """Builds the response (or the stream chunks) of one OpenAI request."""

    def __init__(self, *, chat: bool, model: str, rid: str):
        # serving_chat.py line 3044, serving_completions.py line 640 (and every stream chunk,
        # serving_chat.py line 2587, serving_completions.py line 388): the id is the request's rid.
        self.chat, self.model, self.id = chat, model, rid
        self.created = int(time.time())

    def _envelope(self, obj: str, choices: list, usage_: dict | None) -> dict:
        return {"id": self.id, "object": obj, "created": self.created, "model": self.model,
                "choices": choices, "usage": usage_}

    def response(self, outputs: list[tuple[str, int, int]], n: int = 1, sglext: dict | None = None) -> dict:
        """The reply for ``outputs`` ((text, prompt tokens, completion tokens), prompt-major, ``n``
        per prompt): one choice each, ``index`` in order (serving_completions.py
        ``_build_completion_response``); prompt tokens counted once per prompt
        (usage_processor.py ``calculate_response_usage``); ``sglext`` at the response level
        (serving_chat.py ``_build_chat_response``)."""
        choices = []
        for index, (text, _, _) in enumerate(outputs):
            if self.chat:
                # protocol.py ChatMessage._serialize (lines 1299-1304): no tool_calls key without calls
                choices.append({"index": index, "message": {"role": "assistant", "content": text,
                                                            "reasoning_content": None},
                                "logprobs": None, "finish_reason": "length", "matched_stop": None})
            else:
                choices.append({"index": index, "text": text, "logprobs": None, "finish_reason": "length",
                                "matched_stop": None})
        prompt_tokens = sum(p for _, p, _ in outputs[::max(1, n)])
        completion_tokens = sum(c for _, _, c in outputs)
        obj = "chat.completion" if self.chat else "text_completion"
        body = self._envelope(obj, choices, usage(prompt_tokens, completion_tokens))
        # weight_versions.py build_endpoint_weight_version_metadata (serving_chat.py line 3049,
        # serving_completions.py line 645); the simulator's weights are version "default"
        body["metadata"] = {"weight_version": "default"}
        if sglext:
            body["sglext"] = sglext
        return body

    def _chat_chunk(self, delta: dict, finish: str | None = None, usage_: dict | None = None) -> dict:
        """One chat stream chunk as sse_utils.py ``build_sse_content`` encodes it: no usage key when
        there is no usage (msgspec omit_defaults)."""
        chunk = self._envelope("chat.completion.chunk", [{"index": 0, "delta": delta, "logprobs": None,
                                                          "finish_reason": finish, "matched_stop": None}], usage_)
        if usage_ is None:
            del chunk["usage"]
        return chunk

    def stream_chunks(self, delta: str, prompt_tokens: int, completion_tokens: int, finished: bool,
                      first: bool, options: dict, sglext: dict | None = None) -> list[dict]:
        """The SSE chunks for newly generated text ``delta`` (and, at the end, the sglext chunk and
        the usage chunk)."""
        finish = "length" if finished else None
        running_usage = (usage(prompt_tokens, completion_tokens)
                         if options.get("continuous_usage_stats") else None)
        chunks = []
        if self.chat:
            # serving_chat.py (SGLang 0.5.23): the first output's chunk carries the role (lines
            # 2582-2599), a step's text its own chunk when there is any (lines 1032-1052), and the
            # finish reason comes after the text, in a chunk of its own without usage (lines
            # 2641-2662). sse_utils.py: the delta always names reasoning_content, and a chunk
            # without usage has no usage key (msgspec omit_defaults).
            obj = "chat.completion.chunk"
            if first:
                chunks.append(self._chat_chunk({"reasoning_content": None, "role": "assistant", "content": ""}))
            if delta:
                chunks.append(self._chat_chunk({"reasoning_content": None, "content": delta}, usage_=running_usage))
            if finished:
                chunks.append(self._chat_chunk({"reasoning_content": None}, finish))
        else:
            obj = "text_completion"
            choice = {"index": 0, "text": delta, "logprobs": None, "finish_reason": finish,
                      "matched_stop": None}
            chunks.append(self._envelope(obj, [choice], running_usage))
        if finished and sglext:
            chunks.append({**self._envelope(obj, [], None), "sglext": sglext})
        if finished and options.get("include_usage"):
            last = self._envelope(obj, [], usage(prompt_tokens, completion_tokens))
            # serving_completions.py line 495 dumps this chunk with exclude_none=True; serving_chat.py
            # line 2797 dumps it whole
            chunks.append(last if self.chat else _without_nulls(last))
        return chunks
