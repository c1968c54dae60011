"""A database set with a short ``statement_timeout`` (``ALTER DATABASE ... SET statement_timeout``,
a DBA's guard against runaway queries) while another session holds a lock on the study's tables
(tuner/engine/pg_sessions.py ``session_settings``, patience.py ``said``).

QA (qa154): with ``statement_timeout = 50ms`` on the database and ``LOCK TABLE trials IN ACCESS
EXCLUSIVE MODE`` held by another client, the server cancelled each statement of the worker after
50 ms, and its lines said only ``QueryCanceled: canceling statement due to statement timeout``: the
lock, what is in the way, was never named, and neither was a fix (a lock held past the patience
ended the worker with exit 75 on that line). Every session of the tuner now sets its own
``statement_timeout`` (twice the lock wait, as the reply watch bounds a call), so a lock wait ends
as the lock timeout it is, said with what ends it.

The shared test server (``pg_url``): a database of this test, the lock held by a second session.
"""

import optuna
import sqlalchemy as sa
from support.bounded_call import in_thread
from test_pg_lock_held import table_locked

from tuner.engine.patience import LOCK_HINT, StorageUnavailable
from tuner.engine.storage import driver_url, open_storage


def _database_setting(url: str, statement: str) -> None:
    engine = sa.create_engine(driver_url(url), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            name = conn.execute(sa.text("SELECT current_database()")).scalar()
            conn.execute(sa.text(f'ALTER DATABASE "{name}" {statement}'))
    finally:
        engine.dispose()


def test_a_lock_behind_a_short_statement_timeout_is_said_as_the_lock(pg_url, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")
    _database_setting(pg_url, "SET statement_timeout = '50ms'")  # new sessions take it
    storage = open_storage(pg_url, patient=True)
    study = optuna.create_study(study_name="short-statements", storage=storage, directions=["maximize"])
    study._storage.create_new_trial(study._study_id)
    with table_locked(pg_url):
        out = in_thread(lambda: study.get_trials(deepcopy=False))
    assert out, "the storage call waited for the lock with no end"
    error = out.get("error")
    assert isinstance(error, StorageUnavailable), out
    said = str(error)
    # before the fix: "QueryCanceled: canceling statement due to statement timeout", no fix named
    assert "statement timeout" not in said, said
    assert "LockNotAvailable: canceling statement due to lock timeout" in said, said
    assert said.endswith(f"({LOCK_HINT})"), said
    # the lock gone, the same storage reads again: nothing was lost
    assert [t.state for t in study.get_trials(deepcopy=False)] == [optuna.trial.TrialState.RUNNING]
    with storage.engine.connect() as conn:  # the tuner's own bound, not the database's 50 ms
        assert conn.execute(sa.text("SHOW statement_timeout")).scalar() != "50ms"
    storage.engine.dispose()
