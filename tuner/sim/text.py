"""The simulated model's tokens and text: a pure function of the prompt and the position.

Speculative decoding is lossless, so SGLang's greedy output does not depend on the speculative
settings; here it cannot, because token ``i`` of a reply is derived from the prompt and ``i`` only
(:func:`output_ids`). Sampling (temperature > 0) mixes a per-request salt in. The synthetic text
never produces an end-of-sequence token, so every request runs to ``max_new_tokens``.
"""

from __future__ import annotations

import zlib

_WORDS = (
    "the of and to in is that for it as with was on be by this are from or at an which not have "
    "one all were when we there can been has more if will would so what their out up into some "
    "value return def function list data index result number string key item count step next "
    "first second third time code loop case true false none class self name type node left right "
    "sum total print test check field array object leaf rain autumn falls quiet light wind tree"
).split()
_MASK64 = (1 << 64) - 1
_FIRST_TOKEN_ID = 1000  # keeps synthetic ids clear of special tokens (0 = pad / health check)


def prompt_key(text: str | None, input_ids: list[int] | None) -> int:
    """A stable 32-bit key of a prompt, from its text or its token ids."""
    raw = text if text is not None else ",".join(str(i) for i in (input_ids or []))
    return zlib.crc32(raw.encode("utf-8", "surrogatepass"))


def _mix(x: int) -> int:
    # splitmix64 finaliser: a cheap, well-spread hash of (key, position).
    x = (x + 0x9E3779B97F4A7C15) & _MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK64
    return x ^ (x >> 31)


def output_ids(key: int, start: int, stop: int, salt: int = 0) -> list[int]:
    """Token ids at positions ``start <= i < stop`` of the reply to the prompt with ``key``."""
    base = (key << 32) ^ (salt * 0x632BE59BD9B4E019)
    return [_FIRST_TOKEN_ID + _mix(base + i) % len(_WORDS) for i in range(start, stop)]


def detokenize(ids: list[int]) -> str:
    """Text of synthetic token ids: each token is a word with a leading space."""
    n = len(_WORDS)
    return "".join(" " + _WORDS[(i - _FIRST_TOKEN_ID) % n] for i in ids)


class Continuations:
    """Greedy replies by prompt key, extended on demand: a benchmark sends a few prompts many
    times, and building a reply must cost next to nothing when a whole batch finishes at once."""

    def __init__(self, max_prompts: int = 256):
        self.max_prompts = max_prompts
        self._ids: dict[int, list[int]] = {}
        self._words: dict[int, list[str]] = {}

    def reply(self, key: int, n: int, salt: int = 0) -> tuple[list[int], str]:
        """The first ``n`` token ids of the reply and their text."""
        if salt:
            ids = output_ids(key, 0, n, salt)
            return ids, detokenize(ids)
        ids = self._ids.get(key)
        if ids is None:
            if len(self._ids) >= self.max_prompts:
                self._ids.clear()
                self._words.clear()
            ids = self._ids[key] = []
            self._words[key] = []
        if len(ids) < n:
            new = output_ids(key, len(ids), n)
            ids += new
            self._words[key] += [" " + _WORDS[(i - _FIRST_TOKEN_ID) % len(_WORDS)] for i in new]
        return ids[:n], "".join(self._words[key][:n])
