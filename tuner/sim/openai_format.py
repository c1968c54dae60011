"""OpenAI-format bodies for ``/v1/completions`` and ``/v1/chat/completions``.

Shapes follow SGLang's ``srt/entrypoints/openai/protocol.py`` and ``serving_completions.py`` /
``serving_chat.py``: ``usage`` with ``prompt_tokens``, ``completion_tokens``, ``total_tokens``; in a
stream, ``stream_options.include_usage`` adds a last chunk with empty ``choices`` and the usage, and
``continuous_usage_stats`` puts the usage so far on every chunk.
"""

from __future__ import annotations

import time
import uuid


def usage(prompt_tokens: int, completion_tokens: int) -> dict:
    return {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens, "prompt_tokens_details": None}


class OpenAIFormatter:
    """Builds the response (or the stream chunks) of one OpenAI request."""

    def __init__(self, *, chat: bool, model: str):
        self.chat, self.model = chat, model
        self.id = ("chatcmpl-" if chat else "cmpl-") + uuid.uuid4().hex
        self.created = int(time.time())

    def _envelope(self, obj: str, choices: list, usage_: dict | None) -> dict:
        return {"id": self.id, "object": obj, "created": self.created, "model": self.model,
                "choices": choices, "usage": usage_}

    def response(self, outputs: list[tuple[str, int, int]], n: int = 1) -> dict:
        """The reply for ``outputs`` ((text, prompt tokens, completion tokens), prompt-major, ``n``
        per prompt): one choice each, ``index`` in order (serving_completions.py
        ``_build_completion_response``); prompt tokens counted once per prompt
        (usage_processor.py ``calculate_response_usage``)."""
        choices = []
        for index, (text, _, _) in enumerate(outputs):
            if self.chat:
                choices.append({"index": index, "message": {"role": "assistant", "content": text,
                                                            "reasoning_content": None, "tool_calls": None},
                                "logprobs": None, "finish_reason": "length", "matched_stop": None})
            else:
                choices.append({"index": index, "text": text, "logprobs": None, "finish_reason": "length",
                                "matched_stop": None})
        prompt_tokens = sum(p for _, p, _ in outputs[::max(1, n)])
        completion_tokens = sum(c for _, _, c in outputs)
        obj = "chat.completion" if self.chat else "text_completion"
        return self._envelope(obj, choices, usage(prompt_tokens, completion_tokens))

    def stream_chunks(self, delta: str, prompt_tokens: int, completion_tokens: int, finished: bool,
                      first: bool, options: dict) -> list[dict]:
        """The SSE chunks for newly generated text ``delta`` (and the usage chunk at the end)."""
        finish = "length" if finished else None
        running_usage = (usage(prompt_tokens, completion_tokens)
                         if options.get("continuous_usage_stats") else None)
        chunks = []
        if self.chat:
            obj = "chat.completion.chunk"
            if first:  # serving_chat.py: the first chunk carries the role
                chunks.append(self._envelope(obj, [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                                     "logprobs": None, "finish_reason": None}], None))
            choice = {"index": 0, "delta": {"content": delta}, "logprobs": None,
                      "finish_reason": finish, "matched_stop": None}
        else:
            obj = "text_completion"
            choice = {"index": 0, "text": delta, "logprobs": None, "finish_reason": finish,
                      "matched_stop": None}
        chunks.append(self._envelope(obj, [choice], running_usage))
        if finished and options.get("include_usage"):
            chunks.append(self._envelope(obj, [], usage(prompt_tokens, completion_tokens)))
        return chunks
