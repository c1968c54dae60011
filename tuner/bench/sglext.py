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
    so a 0 verify count means "unknown", never "no verify steps".
    """
    details = spec_details(data)
    if details is None:
        return False
    verify = details.get("spec_verify_ct")
    if isinstance(verify, int) and not isinstance(verify, bool) and verify > 0:
        record.spec_verify_ct = verify
    accept = details.get("spec_accept_length")
    if isinstance(accept, (int, float)) and not isinstance(accept, bool) and accept > 0:
        record.spec_accept_length = float(accept)
    return True
