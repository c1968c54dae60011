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


def usage(prompt_tokens: int, completion_tokens: int, cache_report: bool = False) -> dict:
    """``UsageInfo`` as ``usage_processor.py`` ``calculate_token_usage`` builds it (lines 121-132; the
    fields of protocol.py lines 221-229, in that order): no reasoning tokens, so
    ``completion_tokens_details`` is null; ``prompt_tokens_details`` is null unless the server reports
    cache hits (``--enable-cache-report``): then ``{"cached_tokens": 0}``, the simulator's
    ``meta_info.cached_tokens`` (it models no prefix cache)."""
    return {"prompt_tokens": prompt_tokens, "total_tokens": prompt_tokens + completion_tokens,
            "completion_tokens": completion_tokens,
            "prompt_tokens_details": {"cached_tokens": 0} if cache_report else None, "reasoning_tokens": 0,
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

    def __init__(self, *, chat: bool, model: str, rid: str, cache_report: bool = False):
        # serving_chat.py line 3044, serving_completions.py line 640 (and every stream chunk,
        # serving_chat.py line 2587, serving_completions.py line 388): the id is the request's rid.
        self.chat, self.model, self.id = chat, model, rid
        self.cache_report = cache_report  #: --enable-cache-report
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
        body = self._envelope(obj, choices, usage(prompt_tokens, completion_tokens, self.cache_report))
        # weight_versions.py build_endpoint_weight_version_metadata (serving_chat.py line 3049,
        # serving_completions.py line 645); the simulator's weights are version "default"
        body["metadata"] = {"weight_version": "default"}
        if sglext:
            body["sglext"] = sglext
        return body

    def _chat_chunk(self, rid: str, index: int, delta: dict, finish: str | None = None,
                    usage_: dict | None = None) -> dict:
        """One chat stream chunk as sse_utils.py ``build_sse_content`` encodes it: no usage key when
        there is no usage (msgspec omit_defaults)."""
        chunk = {**self._envelope("chat.completion.chunk", [{"index": index, "delta": delta, "logprobs": None,
                                                            "finish_reason": finish, "matched_stop": None}],
                                  usage_), "id": rid}
        if usage_ is None:
            del chunk["usage"]
        return chunk

    def stream(self, n: int, options: dict) -> "OpenAIStream":
        """The state of one streamed answer of ``n`` choices per prompt (``options``: the request's
        ``stream_options``)."""
        return OpenAIStream(self, n, options)

    def stream_chunks(self, delta: str, prompt_tokens: int, completion_tokens: int, finished: bool,
                      first: bool, options: dict, sglext: dict | None = None) -> list[dict]:
        """The SSE chunks of a one-choice stream for newly generated text ``delta`` (and, at the end,
        the finish, sglext and usage chunks)."""
        stream = self.stream(1, options)
        stream.started = {0} if not first else set()
        chunks = stream.step(0, self.id, delta, prompt_tokens, completion_tokens, finished)
        if finished:
            details = (sglext or {}).get("spec_tokens_details")
            chunks += stream.close({0: details} if details else {})
        return chunks


class OpenAIStream:
    """One streamed OpenAI answer, which may interleave several choices (a list of prompts, or
    ``n > 1``: tokenizer_manager.py ``_stream_batch_responses`` yields each output as it comes, with
    its ``index``, prompt-major). As SGLang 0.5.23 writes it:

    * every chunk for an output has that output's rid as ``id`` (``content["meta_info"]["id"]``); the
      closing chunks have the rid of the last output seen;
    * completions (serving_completions.py lines 262-404): one chunk per output step, the finish
      reason on its last one; chat (serving_chat.py lines 2475-2664): a role chunk first per
      choice, then its text chunks, and the finish reasons only after every choice has ended, one
      chunk each in the order they finished;
    * then the sglext chunk (a list of details, by index, when ``n > 1``) and the usage chunk
      (prompt tokens once per prompt, ``index % n == 0``: usage_processor.py
      ``calculate_streaming_usage``); continuous usage is each choice's own so far.
    """

    def __init__(self, fmt: OpenAIFormatter, n: int, options: dict):
        self.fmt, self.n, self.options = fmt, max(1, n), options
        self.obj = "chat.completion.chunk" if fmt.chat else "text_completion"
        self.started: set[int] = set()
        self.finished: list[int] = []  #: indices in the order they finished
        self.prompt_tokens: dict[int, int] = {}
        self.completion_tokens: dict[int, int] = {}
        self.last_rid = fmt.id

    def step(self, index: int, rid: str, delta: str, prompt_tokens: int, completion_tokens: int,
             finished: bool) -> list[dict]:
        """The chunks for output ``index`` (request ``rid``) having generated ``delta`` more."""
        self.last_rid = rid
        self.prompt_tokens[index], self.completion_tokens[index] = prompt_tokens, completion_tokens
        # continuous usage: chat reports cache hits (serving_chat.py _continuous_usage_cached_details),
        # completions never (serving_completions.py lines 397-401)
        running = (usage(prompt_tokens, completion_tokens, self.fmt.cache_report and self.fmt.chat)
                   if self.options.get("continuous_usage_stats") else None)
        chunks = []
        if self.fmt.chat:
            # serving_chat.py: the first output's chunk carries the role (lines 2582-2599), a step's
            # text its own chunk when there is any (lines 1032-1052); sse_utils.py: the delta always
            # names reasoning_content
            if index not in self.started:
                chunks.append(self.fmt._chat_chunk(rid, index, {"reasoning_content": None, "role": "assistant",
                                                                "content": ""}))
            if delta:
                chunks.append(self.fmt._chat_chunk(rid, index, {"reasoning_content": None, "content": delta},
                                                   usage_=running))
        else:
            choice = {"index": index, "text": delta, "logprobs": None,
                      "finish_reason": "length" if finished else None, "matched_stop": None}
            chunks.append({**self.fmt._envelope(self.obj, [choice], running), "id": rid})
        self.started.add(index)
        if finished:
            self.finished.append(index)
        return chunks

    def close(self, details: dict[int, dict]) -> list[dict]:
        """The chunks after every output has ended: chat's finish reasons (lines 2641-2662, in a
        chunk of their own, without usage), the sglext chunk for ``details`` (spec_tokens_details
        by index) and, with ``include_usage``, the usage chunk."""
        fmt, rid, chunks = self.fmt, self.last_rid, []
        if fmt.chat:
            chunks += [fmt._chat_chunk(rid, i, {"reasoning_content": None}, "length") for i in self.finished]
        if details:
            ordered = [details[i] for i in sorted(details)]
            chunks.append({**fmt._envelope(self.obj, [], None), "id": rid,
                           "sglext": {"spec_tokens_details": ordered if self.n > 1 else ordered[0]}})
        if self.options.get("include_usage"):
            prompt = sum(t for i, t in self.prompt_tokens.items() if i % self.n == 0)
            last = {**fmt._envelope(self.obj, [], usage(prompt, sum(self.completion_tokens.values()),
                                                                 fmt.cache_report)), "id": rid}
            # serving_completions.py line 495 dumps this chunk with exclude_none=True; serving_chat.py
            # line 2797 dumps it whole
            chunks.append(last if fmt.chat else _without_nulls(last))
        return chunks
