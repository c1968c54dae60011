"""SGLang's extension block of OpenAI-format answers: ``sglext.spec_tokens_details``.

SGLang 0.5.23 (``srt/entrypoints/openai/protocol.py``: ``SglExt``, ``SpecTokensDetails``) adds
``sglext`` to ``/v1/chat/completions`` and ``/v1/completions`` answers when the request sets
``return_spec_tokens_details: true``: at the top level of a complete answer, and in a streamed answer
as one chunk with ``choices: []`` after the finish-reason chunks and before the usage chunk
(``serving_chat.py``). ``spec_tokens_details`` is one object, or a list of them when the request
asked for ``n > 1`` choices; the details are the same figures ``/generate`` puts in ``meta_info``
(``spec_verify_ct``, ``spec_accept_length``, ...), built by ``utils.spec_tokens_details_from_meta_info``,
which leaves ``sglext`` out entirely on a server that does not speculate.

One parser for both OpenAI APIs, so ``--api openai`` and ``--api chat`` read accept lengths alike.
"""

from __future__ import annotations

import math
from typing import Any

#: the request field that asks for the details
REQUEST_FIELD = "return_spec_tokens_details"


def spec_details(data: Any) -> dict | None:
    """The first choice's speculative details of an answer (or stream chunk), or None."""
    if not isinstance(data, dict):
        return None
    ext = data.get("sglext")
    if not isinstance(ext, dict):
        return None
    details = ext.get("spec_tokens_details")
    if isinstance(details, list):
        details = details[0] if details else None
    return details if isinstance(details, dict) else None


def read_spec_details(data: Any, record) -> bool:
    """Copy ``spec_verify_ct`` and ``spec_accept_length`` onto ``record``; whether there were any.

    SGLang reports 0 for a figure it did not have (``or 0`` in ``spec_tokens_details_from_meta_info``),
    so a 0 verify count means "unknown", never "no verify steps". Anything else that is no such figure
    (text, a bool, NaN, a negative number, a fractional count) raises ``ValueError``: SGLang sends
    numbers (``protocol.py`` ``SpecTokensDetails``), and a figure dropped would read as one the server
    never sent.
    """
    details = spec_details(data)
    if details is None:
        return False
    verify = details.get("spec_verify_ct")
    if verify is not None:
        if isinstance(verify, float) and verify.is_integer():
            verify = int(verify)
        if isinstance(verify, bool) or not isinstance(verify, int) or verify < 0:
            raise ValueError(f"sglext spec_verify_ct {verify!r} is not a count of verify steps")
        if verify > 0:
            record.spec_verify_ct = verify
    accept = accept_length(details.get("spec_accept_length"), "sglext spec_accept_length")
    if accept:
        record.spec_accept_length = accept
    return True


def accept_length(value: Any, what: str = "spec_accept_length") -> float | None:
    """An accept length as the server sent it: None, or a finite number, never negative (SGLang's
    ``completion_tokens / spec_verify_ct``, ``managers/tokenizer_manager.py``
    ``_calculate_spec_decoding_metrics``). Text, a bool, NaN, infinity or a negative number is no
    accept length: ``ValueError`` (``float()`` read ``"2.5"`` as 2.5 and ``true`` as 1.0). Whether a
    number is possible for the setting is judged later (:mod:`tuner.engine.verify`)."""
    if value is None:
        return None
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} {value!r} is not a number of tokens per verify step")
    return float(value)
