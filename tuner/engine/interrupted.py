"""Letting go of what an interrupted storage call held, before the worker writes again.

Contract: :func:`release_interrupted`, called in an ``except`` clause, clears the local variables
of the frames the exception being handled passed through (they are all finished; the handler's
own frame is left alone), then collects garbage. Nothing is written or raised.

Why: a Ctrl-C, SIGTERM or SIGHUP raised while SQLAlchemy runs a statement on SQLite (a SELECT
stepped, its rows not yet read) makes SQLAlchemy invalidate the connection as for a lost one; with
the statement's cursor still referenced from those frames, ``sqlite3`` cannot close it and the
connection lives on holding its read (SHARED) lock. The worker's next write -- failing the trial
as interrupted and queuing its setting -- waits for that lock, held by its own process: it waited
the whole storage patience (10 minutes) in silence, then ended with exit 75 and the trial left
RUNNING (QA: 1 run in about 10 under load, SIGINT or SIGHUP 1.5-2.5 s into a study on
``server.backend: model``; the worker's stack was in ``mark_interrupted``'s commit). SQLite's own
rule: a connection closed with a statement not finalized becomes a "zombie" that keeps its locks
until the statement is finalized (``sqlite3_close_v2``).

Clearing the frames is not enough on Python 3.11: a frame keeps its function (``f_func``) after
``frame.clear()``, and a comprehension's function holds the variables of its enclosing function in
its closure. A SIGTERM landing in SQLAlchemy's ``loading.instances`` list comprehension (its
``cursor`` in the closure: sqlalchemy/orm/loading.py, ``instances``) kept the cursor alive through
the traceback, and the trial's ``mark_interrupted`` waited the whole patience on its own lock (QA,
qa185: exit 75 and the trial RUNNING, about 1 run in 40 of SIGTERM fuzzed over a model-backend run).
So a signal's exception (``KeyboardInterrupt``, ``SystemExit``: not an ``Exception``, whose
traceback nobody prints) also lets go of its traceback, and of those of the exceptions it was
raised during; a crash's traceback is kept for its report (an ``Exception`` passes SQLAlchemy's own
``except Exception`` clauses, which close the cursor).
"""

from __future__ import annotations

import gc
import logging
import sys
import traceback
import warnings

from ..server.signals import raised_by_signal


class _QuietSignal(logging.Filter):
    """Drops a log record of a signal's own exception (:func:`tuner.server.signals.raised_by_signal`).
    SQLAlchemy's pool logs any exception that lands while it resets a connection it takes back, then
    raises it again (``_finalize_fairy``, sqlalchemy/pool/base.py: "Exception during reset or
    similar", with ``exc_info``): a SIGTERM landing there printed that line and a traceback on a
    clean stop (QA, qa185: 1 run in 40 of SIGTERM fuzzed over a ``server.backend: model`` run). The
    stop itself goes on as for a signal anywhere else; any other exception there is still logged."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and record.exc_info[1] is not None and raised_by_signal(record.exc_info[1]))


QUIET_SIGNAL = _QuietSignal()
#: SQLAlchemy's pool loggers (``sqlalchemy.log.class_logger``: module and class of each pool, in
#: sqlalchemy/pool/impl.py); the tuner's storages use ``NullPool``. Filtered once, on import.
POOL_LOGGERS = tuple(f"sqlalchemy.pool.impl.{name}" for name in (
    "NullPool", "QueuePool", "SingletonThreadPool", "StaticPool", "AssertionPool", "AsyncAdaptedQueuePool",
    "FallbackAsyncAdaptedQueuePool"))
for _name in POOL_LOGGERS:
    logging.getLogger(_name).addFilter(QUIET_SIGNAL)


def release_interrupted() -> None:
    """Free what the frames of the exception being handled hold (see the module docstring). What
    they held was cut short mid-way, so its finalizers may fail or warn as it goes (an event loop
    interrupted in its ``__init__``, a coroutine never awaited): that is said by nobody, as it is
    not the tuner's error (QA: a SIGHUP landing in the health probe printed "Exception ignored in:
    <function BaseEventLoop.__del__ ...> Traceback ... AttributeError" on the way out)."""
    exc = sys.exc_info()[1]
    if exc is None or exc.__traceback__ is None:
        return
    hook, sys.unraisablehook = sys.unraisablehook, lambda unraisable: None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # "coroutine ... was never awaited"
            chain = _chain(exc)
            for each in chain:  # an executing frame is skipped (RuntimeError, caught)
                traceback.clear_frames(each.__traceback__)
            if not isinstance(exc, Exception):  # a signal's: its frames' functions hold cursors too
                for each in chain:
                    each.__traceback__ = None  # a bare `raise` after this starts a traceback anew
            gc.collect()  # a cursor in a reference cycle with its result is freed only by the collector
    finally:
        sys.unraisablehook = hook


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised during or from (``__context__``, ``__cause__``), each
    once: a Ctrl-C that lands while SQLAlchemy handles another error (its ``except`` and ``finally``
    clauses around a statement) holds that error, whose traceback holds the statement's frames too."""
    seen: list[BaseException] = []
    todo = [exc]
    while todo:
        each = todo.pop()
        if each is None or any(each is s for s in seen):
            continue
        seen.append(each)
        todo += [each.__context__, each.__cause__]
    return [e for e in seen if e.__traceback__ is not None]
