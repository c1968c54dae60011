"""Behind a real PgBouncer in transaction mode, every transaction of a storage runs with the tuner's
session settings (synchronous_commit on, lock_timeout, idle_in_transaction_session_timeout,
statement_timeout; TimeZone UTC), whichever server connection PgBouncer gives it.

QA (qa176): on a database set to synchronous_commit = off, a statement of a worker's storage, given a
server connection other than the one its connect hook had set, ran with synchronous_commit off and
lock_timeout 0 (wait for ever): the settings are a session's, and PgBouncer's transaction mode
gives each transaction any server connection of its pool.
"""

import psycopg2
import sqlalchemy as sa
from optuna.storages._rdb.storage import _create_scoped_session
from support.pgbouncer import pgbouncer

from tuner.engine.pg_sessions import idle_in_transaction_s, lock_wait_s, statement_limit_s
from tuner.engine.storage import driver_url, open_storage

SHOW = ("SELECT current_setting('synchronous_commit'), current_setting('lock_timeout'), "
        "current_setting('idle_in_transaction_session_timeout'), current_setting('statement_timeout'), "
        "current_setting('TimeZone')")


def _ms(seconds: float) -> str:
    """A setting of milliseconds as PostgreSQL shows it (SHOW's unit, as the server picks it)."""
    ms = int(1000 * seconds)
    for unit, size in (("min", 60000), ("s", 1000)):
        if ms % size == 0:
            return f"{ms // size}{unit}"
    return f"{ms}ms"


def test_each_transaction_has_the_settings_behind_pgbouncer_in_transaction_mode(pg_url, tmp_path, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "600")
    db = sa.create_engine(driver_url(pg_url), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with db.connect() as conn:  # the database's defaults, which a session without the settings has
            name = conn.execute(sa.text("SELECT current_database()")).scalar()
            conn.execute(sa.text(f'ALTER DATABASE "{name}" SET synchronous_commit = off'))
            conn.execute(sa.text(f"ALTER DATABASE \"{name}\" SET timezone = 'America/Los_Angeles'"))
    finally:
        db.dispose()
    expected = ("on", _ms(lock_wait_s()), _ms(idle_in_transaction_s()), _ms(statement_limit_s()), "UTC")
    with pgbouncer(pg_url, "transaction", tmp_path) as via:
        storage = open_storage(via)
        held = []
        try:
            with _create_scoped_session(storage.scoped_session) as session:  # as Optuna's calls run
                assert tuple(session.execute(sa.text(SHOW)).one()) == expected
            # other clients hold the server connections the storage's sessions were set on: its
            # next transaction runs on one PgBouncer opens anew
            for _ in range(3):
                other = psycopg2.connect(driver_url(via).replace("postgresql+psycopg2", "postgresql"))
                other.cursor().execute("SELECT 1")
                held.append(other)
            with _create_scoped_session(storage.scoped_session) as session:
                assert tuple(session.execute(sa.text(SHOW)).one()) == expected
            assert storage.get_all_studies() == []
        finally:
            for other in held:
                other.close()
            storage.engine.dispose()
