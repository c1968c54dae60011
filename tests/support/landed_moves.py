"""A state move whose commit landed before the driver's error: the seam below
:func:`tuner.engine.asktell.move_state` (its one conditional UPDATE, ``asktell._move_state``), or
below :func:`tuner.engine.asktell.replace_study_attr` (``seam="_replace_study_attr"``).

    broke = break_the_first_move(monkeypatch)   # the first move commits, then raises
    ...                                         # the patient storage retries it
    assert broke == [True]                      # the first attempt had moved the trial
"""

from __future__ import annotations


def break_the_first_move(monkeypatch, seam: str = "_move_state") -> list[bool]:
    """Make the next :func:`~tuner.engine.asktell.move_state` (or the other conditional UPDATE of
    :mod:`tuner.engine.asktell` named by ``seam``) commit, then raise SQLite's
    ``database is locked`` as if the connection broke before the answer (a transient error, which a
    patient storage retries); returns the list that gets what that first attempt returned."""
    import sqlite3

    import sqlalchemy

    from tuner.engine import asktell

    move, broke = getattr(asktell, seam), []

    def commit_then_break(*args):
        moved = move(*args)
        if not broke:
            broke.append(moved)
            locked = sqlite3.OperationalError("database is locked")
            raise sqlalchemy.exc.OperationalError("COMMIT", {}, locked)
        return moved

    monkeypatch.setattr(asktell, seam, commit_then_break)
    return broke
