"""The table-creation lock holds behind a real PgBouncer in transaction mode (``pool_mode =
transaction``, the common default of shared clusters), and is let go when the storage is built.

QA (qa176): through PgBouncer in transaction mode, three workers of one study ran, and every later
command (`tuner study status`, a new worker) waited 120 s and stopped with "another worker has held
the table-creation lock for over 120 s; is a tuner process hung?": the session advisory lock had
stayed on a server connection PgBouncer gave back to its pool at the commit, and its unlock, sent
over another one, did not find it. A client given that server connection took the lock as its own
(re-entrant): two builds at once.
"""

import sqlalchemy as sa
from support.pgbouncer import pgbouncer

from tuner.engine.storage import _SCHEMA_LOCK_KEY, _schema_lock, driver_url, open_storage


def _held(server_db_url: str) -> int:
    """How many sessions hold the table-creation lock, asked of the server itself (not via the bouncer)."""
    engine = sa.create_engine(driver_url(server_db_url), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return conn.execute(sa.text(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = "
                "(SELECT oid FROM pg_database WHERE datname = current_database()) "
                "AND ((classid::bigint << 32) | objid::bigint) = :k"), {"k": _SCHEMA_LOCK_KEY}).scalar()
    finally:
        engine.dispose()


def test_the_lock_excludes_and_is_let_go_behind_pgbouncer_in_transaction_mode(pg_url, tmp_path):
    with pgbouncer(pg_url, "transaction", tmp_path) as via:
        other = sa.create_engine(driver_url(via), poolclass=sa.pool.NullPool)
        try:
            with other.connect() as conn:  # another worker's connection through the same bouncer
                with _schema_lock(driver_url(via)):
                    # its transaction, while the lock is held: PgBouncer gives it the server
                    # connection most recently given back
                    assert conn.execute(sa.text("SELECT pg_try_advisory_xact_lock(:k)"),
                                        {"k": _SCHEMA_LOCK_KEY}).scalar() is False
                    assert _held(pg_url) == 1
                # the block ended while that transaction still holds its server connection
                assert _held(pg_url) == 0
        finally:
            other.dispose()
        # and the storage opens through it, as a worker opens it, with nothing left held
        built = open_storage(via)
        try:
            assert built.get_all_studies() == []
        finally:
            built.engine.dispose()
        assert _held(pg_url) == 0
