"""The request ids in flight: the keys of SGLang's ``rid_to_state``, as far as the simulator needs them.

SGLang 0.5.23 registers a request's ids synchronously when the tokenizer manager accepts it
(``srt/managers/tokenizer_manager.py`` ``_init_req_state``, lines 3834-3837: a second request with
one of them is a ``ValueError``, "Duplicate request ID detected: RID") and drops them when the
request ends, however it ends. :class:`LiveRequestIds` is that table; the refusal itself is
:func:`tuner.sim.requests._request_ids`, which reads it through ``in``.

Used from the server's one event loop only (no locking): ``hold`` and the release run without an
``await`` between the check and the registration.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Optional

__all__ = ["HoldIds", "LiveRequestIds"]
#: what :meth:`LiveRequestIds.lease` yields: puts a request's ids in flight until the lease ends
HoldIds = Callable[[Iterable[Optional[str]]], None]


class LiveRequestIds:
    """The client-chosen ids of the requests being served (a request without one holds nothing)."""

    def __init__(self) -> None:
        self._ids: set[str] = set()

    def __contains__(self, rid: object) -> bool:
        return rid in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    @contextmanager
    def lease(self) -> Iterator[HoldIds]:
        """One handler's hold on its request's ids: ``with live.lease() as hold: ...; hold(ids)``.

        Contract: ``hold(ids)`` puts the ids given (``None`` and ``""``: none; the server draws the
        request a fresh one) in flight at once; every id held through this lease leaves the table
        when the ``with`` block exits, whatever the exit (a return, an exception, the handler's
        cancellation when its client disconnects). Ids never
        passed to ``hold`` are never touched, so a request refused as a duplicate before it holds
        anything cannot free the live request's id. The caller checks the ids first (the request
        parsers do); ``hold`` raises ``ValueError`` for an id already in flight instead of sharing
        it, since the first request to end would then free it under the other."""
        held: list[str] = []

        def hold(ids: Iterable[str | None]) -> None:
            new = [r for r in ids if r]
            taken = [r for r in new if r in self._ids]
            if taken or len(set(new)) != len(new):
                raise ValueError(f"Request ids already in flight or repeated: {taken or new}")
            self._ids.update(new)
            held.extend(new)

        try:
            yield hold
        finally:
            self._ids.difference_update(held)
