"""Whether a suite can fit the server's context at all, asked before its first request.

The prompts are tokenized by the server, so the tuner cannot tell a prompt's tokens; but a request
whose ``max_tokens`` alone is the context length or more is refused whatever its prompt (one token
at least): SGLang 0.5.23's ``srt/managers/tokenizer_manager.py`` ``_validate_one_request``, with
``allow_auto_truncate`` off (its default; a server that says it on in ``/server_info`` lowers
``max_new_tokens`` instead, and is not checked), answers HTTP 400 when input tokens plus
``max_new_tokens`` exceed ``context_len``. Every such request of the suite would fail, and a run
would print its tables of failed rows after a whole suite of them (QA, qa218: `tuner bench --suite
quick` against a server of context 400, "41 of 48 requests failed" after the run). The context
length is the server's own: ``/server_info``'s ``context_length`` (a resolved server argument), else
``/v1/models``' ``max_model_len`` (``http_server.py``: ``model_config.context_len``).
"""

from __future__ import annotations

from typing import Any

from ..config.wording import counted
from .client import BenchError


class SuiteOverContext(BenchError):
    """The suite asks more tokens of a request than the server's context holds (:func:`unfit_request`):
    raised before the first request, nothing sent. Bad input, not the server's fault."""


def context_length(info: dict | None, models: Any) -> tuple[int, str] | None:
    """The server's context length and where it was read (``/server_info`` first), or None when
    neither says one (a positive integer)."""
    said = (info or {}).get("context_length")
    if _tokens(said):
        return said, "/server_info context_length"
    data = models.get("data") if isinstance(models, dict) else None
    for model in data if isinstance(data, list) else []:
        said = model.get("max_model_len") if isinstance(model, dict) else None
        if _tokens(said):
            return said, "/v1/models max_model_len"
    return None


def _tokens(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def unfit_request(suite, limit: int, where: str) -> str | None:
    """Why ``suite`` cannot run on a server of context ``limit`` (read at ``where``): its first
    request whose ``max_tokens`` is ``limit`` or more, named by phase, prompt and the suite key that
    sets it, and how many of the suite's requests are so; None when every one may fit."""
    over = []  # (phase, prompt, max_tokens, key)
    for p in suite.cycled(suite.warmup.requests):
        if suite.warmup.max_tokens >= limit:
            over.append(("warm-up", p.name, suite.warmup.max_tokens, "warmup.max_tokens"))
    for p in suite.single_prompts():
        for n in suite.single_lengths(p):
            if n >= limit:
                key = "single.lengths" if suite.single.lengths is not None else "the prompt's max_tokens"
                over.extend([("single", p.name, n, key)] * suite.single.repeats)
    for c in suite.sweep.concurrencies:
        for p in suite.cycled(c):
            n = suite.sweep_tokens(p)
            if n >= limit:
                key = "sweep.max_tokens" if suite.sweep.max_tokens else "the prompt's max_tokens"
                over.extend([("sweep", p.name, n, key)] * suite.sweep.repeats)
    if not over:
        return None
    phase, prompt, n, key = over[0]
    return (f"suite {suite.name!r} asks up to {n} tokens per request ({phase} {prompt}, {key}), the server's "
            f"context length {limit} ({where}) or more: SGLang refuses such a request with HTTP 400 whatever "
            f"its prompt ({counted(len(over), 'request')} of the suite are so); lower the suite's max_tokens "
            "(single.lengths, sweep.max_tokens, warmup.max_tokens; a dataset's max_output_tokens) or serve a "
            "longer context (--context-length)")
