"""Cheap SSE encoding of SGLang's cumulative ``/generate`` stream, and the time-keeping watch.

SGLang's default ``/generate`` stream (``incremental_streaming_output`` off) sends, per chunk, the
whole text so far, all output ids so far and ``meta_info`` (``http_server.py``
``stream_results``: ``b"data: " + dumps_json(out) + b"\\n\\n"``); with the flag on, each chunk's
new text and ids only (:class:`IncrementalChunks`). Re-encoding the cumulative text
and id list with ``json.dumps`` for every chunk made the simulator CPU-bound past ~30,000 chunks
per wall second. :class:`CumulativeChunks` keeps the already-encoded text and ids as bytes and
appends only the new tokens' encoding: a chunk costs one copy of the bytes, not a re-encode.

:class:`Timekeeping` answers "did the simulator keep up with model time?": every delivery (a
stream chunk written, a reply handed to aiohttp) is compared with the wall deadline of the model
instant it reports. Latency a client measures is distorted by that lag; a delivery whose lag is
more than 3% of its request's model-time age (and over a millisecond of wall time) counts as late.
"""

from __future__ import annotations

import json
import logging
import time

_log = logging.getLogger("tuner.sim")

#: A delivery is late when its lag exceeds this share of its request's age (model time) ...
LATE_SHARE = 0.03
#: ... and this much wall time (scheduler wake-ups jitter by a fraction of a millisecond).
LATE_MIN_WALL_S = 0.001
#: The simulator "fell behind" once more than this share of deliveries were late.
BEHIND_SHARE = 0.01
#: At most one warning line per this many wall seconds.
WARN_EVERY_S = 5.0


class CumulativeChunks:
    """SSE ``data:`` lines of one ``/generate`` stream, built incrementally."""

    def __init__(self, index: int | None = None) -> None:
        self._text = bytearray()
        self._ids = bytearray()
        #: a streamed batch's output position, after meta_info (tokenizer_manager.py line 2224)
        self._tail = b"}\n\n" if index is None else b', "index": %d}\n\n' % index

    def chunk(self, new_text: str, new_ids: list[int], meta_info: dict) -> bytes:
        """The next chunk: cumulative text and ids, with ``meta_info`` (and ``index`` in a batch)."""
        if new_text:
            self._text += json.dumps(new_text)[1:-1].encode()  # JSON string escapes are per character
        if new_ids:
            if self._ids:
                self._ids += b", "
            self._ids += ", ".join(map(str, new_ids)).encode()
        return b"".join((b'data: {"text": "', self._text, b'", "output_ids": [', self._ids,
                         b'], "meta_info": ', json.dumps(meta_info).encode(), self._tail))


class IncrementalChunks:
    """SSE ``data:`` lines of one ``/generate`` stream under ``--incremental-streaming-output``: each
    chunk carries only the text and ids new since the last one, with ``meta_info`` (whose counts stay
    cumulative). SGLang 0.5.23 ``managers/tokenizer_manager.py`` lines 2629-2650 (``"text":
    delta_text``, ``"output_ids": delta_output_ids``); chunks that came due together go out as one
    (``_coalesce_streaming_chunks``, lines 1854-1889 and 1986), as the simulator sends them."""

    def __init__(self, index: int | None = None) -> None:
        self.index = index  #: a streamed batch's output position (tokenizer_manager.py line 2224)

    def chunk(self, new_text: str, new_ids: list[int], meta_info: dict) -> bytes:
        """The next chunk: the new text and ids only, with ``meta_info`` (and ``index`` in a batch)."""
        out = {"text": new_text, "output_ids": new_ids, "meta_info": meta_info}
        if self.index is not None:
            out["index"] = self.index
        return b"data: " + json.dumps(out).encode() + b"\n\n"


class Timekeeping:
    """Counts deliveries that reached the client late against model time (see the module doc)."""

    def __init__(self, speedup: float, clock=time.monotonic):
        self.speedup, self.clock = speedup, clock
        self.deliveries = 0
        self.late = 0
        self.max_lag_wall_s = 0.0
        self._warned_at = -WARN_EVERY_S

    def delivered(self, due_wall: float, age_model_s: float) -> None:
        """A delivery due at wall time ``due_wall`` (its model instant), for a request
        ``age_model_s`` model seconds old at that instant, has just been made."""
        lag = self.clock() - due_wall
        self.deliveries += 1
        if lag > self.max_lag_wall_s:
            self.max_lag_wall_s = lag
        if lag > LATE_MIN_WALL_S and lag * self.speedup > LATE_SHARE * max(age_model_s, 1e-9):
            self.late += 1
            now = self.clock()
            if now - self._warned_at >= WARN_EVERY_S:
                self._warned_at = now
                _log.warning(
                    f"Simulator fell behind model time: a delivery was {lag * 1e3:.1f} ms (wall) late, "
                    f"{lag * self.speedup:.3f} model s on a request {age_model_s:.3f} model s old; "
                    f"{self.late} of {self.deliveries} deliveries late so far. Latencies measured now "
                    f"are distorted: lower --sim-speedup or the load.")

    @property
    def fell_behind(self) -> bool:
        return self.late > BEHIND_SHARE * self.deliveries

    def as_dict(self) -> dict:
        return {"fell_behind": self.fell_behind, "deliveries": self.deliveries,
                "late_deliveries": self.late, "max_lag_wall_ms": round(self.max_lag_wall_s * 1e3, 3),
                "late_rule": f"lag > {LATE_SHARE:.0%} of the request's model-time age and > "
                             f"{LATE_MIN_WALL_S * 1e3:g} ms wall"}
