"""Step 3's sampling parameters, as SGLang 0.5.23 resolves and checks them:
``SamplingParams.__post_init__`` and ``verify()`` (``srt/sampling/sampling_params.py``), and what
the simulator refuses because it cannot compute it (:func:`unsupported`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

#: sampling_params.py _SAMPLING_EPS and TOP_K_ALL.
_SAMPLING_EPS = 1e-6
TOP_K_ALL = 1 << 30

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


def unsupported(what: str) -> ValueError:
    return ValueError(f"The simulated SGLang server does not implement {what} (SGLang 0.5.23 "
                      "serves it; the simulator refuses rather than answer wrongly).")


def refuse_sampling_features(params: dict) -> None:
    if params.get("stop") or params.get("stop_token_ids") or params.get("stop_regex"):
        raise unsupported("stop strings and stop tokens (stop, stop_token_ids, stop_regex)")
    if any(params.get(k) for k in ("json_schema", "regex", "ebnf", "structural_tag", "choice")):
        raise unsupported("constrained decoding (json_schema, regex, ebnf, structural_tag, choice)")
    if (params.get("beam_width") or 1) > 1:
        raise unsupported("beam search (beam_width)")
