"""``tuner.engine.interrupted.release_interrupted`` frees what interrupted frames held without a word
from their finalizers: what a Ctrl-C or SIGHUP cut short mid-way (an event loop interrupted in its
``__init__``) may fail as it is freed, and Python's default hook printed "Exception ignored in: ...
Traceback ... AttributeError" on the way out of `study run` (QA: the SIGHUP test, once in five
suites). The hook and the warnings are the caller's again afterwards."""

from __future__ import annotations

import sys
import warnings

from tuner.engine.interrupted import release_interrupted


class HalfBuilt:
    """Stands for an object cut short in its ``__init__``: its finalizer fails."""

    def __del__(self):
        raise AttributeError("'HalfBuilt' object has no attribute '_signal_handlers'")


def _interrupted_holding_half_built():
    held = HalfBuilt()  # noqa: F841 - held by the frame the interrupt passes through
    raise KeyboardInterrupt


def test_the_finalizers_of_what_the_interrupt_cut_short_say_nothing(monkeypatch):
    said = []
    monkeypatch.setattr(sys, "unraisablehook", said.append)
    try:
        _interrupted_holding_half_built()
    except KeyboardInterrupt:
        with warnings.catch_warnings(record=True) as warned:
            warnings.simplefilter("always")
            release_interrupted()
    assert said == [] and warned == []
    assert sys.unraisablehook == said.append  # the caller's hook is back
    broken = HalfBuilt()  # a finalizer failing after the release is reported as ever
    del broken
    assert len(said) == 1 and isinstance(said[0].exc_value, AttributeError)


def _select_then_fail(db):
    """A SELECT stepped and not read, then an error: the frame holds the cursor, and so SQLite's read
    lock, as SQLAlchemy's frames do when a statement fails."""
    import sqlite3

    conn = sqlite3.connect(db)
    cursor = conn.execute("SELECT x FROM t")
    cursor.fetchone()  # stepped: the statement is active, its read lock held
    raise sqlite3.OperationalError("the statement's own error")


def _ctrl_c_while_handling(db):
    import sqlite3

    try:
        _select_then_fail(db)
    except sqlite3.OperationalError:
        raise KeyboardInterrupt  # a Ctrl-C landing in SQLAlchemy's handling of that error


def test_what_the_exception_the_interrupt_landed_in_held_is_freed_too(tmp_path):
    """QA (qa143): a Ctrl-C 2-4 s into a `server.backend: model` run on SQLite stalled its own write
    for the whole storage patience, exit 75, 2 runs in 14: the interrupt had landed while another
    exception was handled, whose traceback (the interrupt's ``__context__``) still held the statement's
    frames and so its lock; only the interrupt's own frames were freed. Now the chain's are too."""
    import sqlite3

    db = tmp_path / "t.db"
    setup = sqlite3.connect(db)
    setup.executescript("CREATE TABLE t (x); INSERT INTO t VALUES (1), (2), (3);")
    setup.close()
    try:
        _ctrl_c_while_handling(db)
    except KeyboardInterrupt:
        release_interrupted()
        writer = sqlite3.connect(db, timeout=0.2)
        try:
            writer.execute("INSERT INTO t VALUES (4)")
            writer.commit()  # "database is locked" while the reader's statement lives
        finally:
            writer.close()
