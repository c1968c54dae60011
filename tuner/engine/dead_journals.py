"""How a process stores the measurements dead workers of its host left in the journal, before it
fails their trials (:func:`tuner.engine.workers.reap_dead_trials`)."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable, Iterator


class _Journals:
    """Per storage, how this process stores the measurements dead workers of this host left in its
    journal (:func:`tuner.engine.finish.replay_journal`, through the runner, which knows the workdir).

    Why here: the journal was replayed only when a run started. A worker of this host killed during
    its tell (its measurement journaled, its trial RUNNING) had its trial failed at once by the other
    workers of the host (its pid gone: :func:`reap_dead_trials`), wherever they reaped (before a
    proposal, waiting for a claim, for the baseline or for the last budget slots); its setting was
    launched again and the journaled measurement came back only with the next run there, a second
    trial of the setting one launch past the budget, or a second baseline that replaced the one the
    trials were judged against (QA, qa111; tests/engine/test_dead_neighbours_journal.py)."""

    def __init__(self):
        self._replays: dict[int, Callable[[], object]] = {}

    @staticmethod
    def _key(storage) -> int:
        return id(getattr(storage, "_backend", storage))

    def replay(self, storage) -> bool:
        """Replay this process's journal for ``storage``; whether anything was stored."""
        replay = self._replays.get(self._key(storage))
        return bool(replay()) if replay is not None else False

    @contextmanager
    def first(self, storage, replay: Callable[[], object]) -> Iterator[None]:
        key = self._key(storage)
        self._replays[key] = replay
        try:
            yield
        finally:
            self._replays.pop(key, None)


_JOURNALS = _Journals()


def journal_first(storage, replay: Callable[[], object]):
    """A context manager: while it is on, :func:`tuner.engine.workers.reap_dead_trials` on ``storage``
    calls ``replay()`` (truthy when it stored something) before it fails a trial of a dead worker of
    this host."""
    return _JOURNALS.first(storage, replay)


def replay(storage) -> bool:
    """Replay this process's journal for ``storage`` (when a run registered one); whether anything
    was stored."""
    return _JOURNALS.replay(storage)
