"""What every PostgreSQL session of the tuner is set to, and how long a call waits for its reply.

:func:`session_settings` is the ``connect`` hook of every PostgreSQL storage
(:func:`tuner.engine.storage.open_storage`), :func:`transaction_settings` its ``begin`` hook (behind
a pooler in transaction mode, the same settings for each transaction); :func:`reply_limit_s`
bounds one attempt of a patient call (:mod:`tuner.engine.reply_watch`). Both read the patience
when called, not at import; and import :mod:`tuner.engine.patience` (and so Optuna) only then, so a
command that opens no storage (``tuner study status --help``) does not load it through
:mod:`tuner.engine.storage`.
"""

from __future__ import annotations

from .reply_watch import bounded, no_reply

#: How long a PostgreSQL statement of the tuner waits for a lock another session holds (seconds),
#: at most the patience (:func:`tuner.engine.patience.patience_s`); then the server cancels it
#: (``lock_not_available``), which a running worker retries as an outage. See :func:`session_settings`.
PG_LOCK_TIMEOUT_S = 60
#: The shortest time a tuner session may sit idle inside a transaction before the server ends it
#: (seconds); see :func:`idle_in_transaction_s`. Not less: a worker descheduled for a second or two
#: mid-transaction on a loaded node (or a CI machine running tests at a patience of 2 s) is no frozen
#: one, and ending its session would cost it an outage and its retry.
MIN_IDLE_IN_TRANSACTION_S = 5.0
#: The shortest wait for a statement's reply before the sessions are cut (seconds).
MIN_REPLY_WAIT_S = 10.0


def session_settings(dbapi_connection, connection_record) -> None:
    """SQLAlchemy's ``connect`` hook of a PostgreSQL storage: ``synchronous_commit = on``,
    ``TimeZone = 'UTC'``, ``lock_timeout``, ``idle_in_transaction_session_timeout`` and
    ``statement_timeout`` for the session, set outside any transaction so no rollback undoes them
    (SQLAlchemy's own recipe for a session setting, any driver).

    Why UTC: Optuna's heartbeats are the database's clock, ``now()``, stored in a column without a
    zone (``trial_heartbeats.heartbeat``) and compared with ``now()`` again, both as the wall time
    of the session's ``TimeZone`` (optuna/storages/_rdb/storage.py, ``record_heartbeat`` and
    ``_get_stale_trial_ids``). That is the server's zone unless the client says otherwise
    (``PGTZ`` on a node, ``ALTER ROLE ... SET timezone``): a worker whose session ran in
    America/Los_Angeles wrote heartbeats a reaper in UTC read as 8 hours old, and its live trial
    was failed at once (QA, qa95); the reverse kept a dead worker's trial RUNNING for 8 hours; and
    a server zone with summer time made every heartbeat an hour old at the spring change. In UTC
    every session writes and compares one clock that never jumps.

    Why ``lock_timeout`` (:data:`PG_LOCK_TIMEOUT_S`, at most the patience): PostgreSQL's default is
    0, wait for a lock for ever. Another session holding a lock on Optuna's tables (``LOCK TABLE
    trials``, a migration, a ``VACUUM FULL``, a forgotten ``BEGIN`` in psql) raised no error at all:
    the worker's statement waited in silence past ``TUNER_STORAGE_PATIENCE_S`` (QA, qa106: 30 s and
    counting at a patience of 3 s), its trial RUNNING, no line said why. Cancelled by the server
    (SQLSTATE 55P03, psycopg2's ``LockNotAvailable``, an ``OperationalError``), the wait is an
    outage like any other: retried within the patience, then one line and exit 75; a read command
    says its one line instead of hanging.

    Why ``idle_in_transaction_session_timeout`` (:func:`idle_in_transaction_s`, half the lock wait):
    the locks a session of one worker takes are the other workers' waits. Optuna's trial creation
    holds the study's row ``FOR UPDATE`` until its commit (optuna/storages/_rdb/storage.py,
    ``_create_new_trial``); a worker frozen inside that transaction (SIGSTOP, a paused VM, a node
    whose network dropped: the server keeps its session, idle in the transaction, until TCP
    keepalive gives up, hours later) held every other worker's next trial, which waited in silence
    and then gave up past its patience (QA, qa136: one worker stopped there for 70 s, the other
    stood still as long, not a line). No statement of the tuner leaves a transaction idle by
    design (each runs to its commit in milliseconds), so the server now ends such a session once it
    has sat idle half the lock wait: its transaction rolls back, the waiting workers go on before
    their own lock wait ends, and the frozen worker, once it wakes, finds its session gone, an
    outage it retries like a ``pg_terminate_backend`` (its writes are safe to repeat).

    Why ``statement_timeout`` (:func:`statement_limit_s`, twice the lock wait): a database or role
    set with a short one (a DBA's guard against runaway queries, ``ALTER DATABASE ... SET
    statement_timeout = '50ms'``) cancelled the tuner's statements before their lock wait ended:
    with another session holding ``LOCK TABLE trials``, every line of the worker said
    ``QueryCanceled: canceling statement due to statement timeout`` and never the lock in the way
    or what ends it (QA, qa154), and a statement merely slower than that limit would fail on every
    try, taken for an outage. The tuner bounds its own waits (the lock wait, the reply watch), so
    its sessions take the bound the reply watch gives a patient call; a lock wait, shorter, ends
    first, as the lock timeout it is (``LOCK_HINT``)."""
    lock_ms = 1000 * lock_wait_s()
    idle_ms = 1000 * idle_in_transaction_s()
    statement_ms = 1000 * statement_limit_s()
    autocommit = dbapi_connection.autocommit
    dbapi_connection.autocommit = True
    cursor = dbapi_connection.cursor()
    limit = unarmed_reply_limit_s()
    try:
        # the first statements of a new session: behind a PgBouncer whose server is gone they wait
        # in its queue (QA, qa183), so they are bounded as any statement of a read (StatementBound)
        with bounded(dbapi_connection, limit) as cut:
            try:
                cursor.execute("SET SESSION synchronous_commit TO on")
                cursor.execute("SET SESSION TimeZone TO 'UTC'")
                cursor.execute(f"SET SESSION lock_timeout TO {int(lock_ms)}")  # milliseconds
                cursor.execute(f"SET SESSION idle_in_transaction_session_timeout TO {int(idle_ms)}")
                cursor.execute(f"SET SESSION statement_timeout TO {int(statement_ms)}")
                cursor.execute("SELECT pg_backend_pid()")
                server_pid = cursor.fetchone()[0]
            except Exception as exc:
                if cut.is_set():
                    raise no_reply(limit, cause=exc) from None
                raise
    finally:
        try:
            cursor.close()
            dbapi_connection.autocommit = autocommit
        except Exception:  # noqa: BLE001 - a session cut above: its error is the one to say
            pass
    # A connection pooler (PgBouncer) answers the client's connection with a process id of its own
    # (its cancel key), not the server process's: behind one in transaction mode, each transaction
    # may run on another server connection, where none of the settings above were made (QA, qa176:
    # synchronous_commit off and lock_timeout 0, the database's defaults, on a worker's statements).
    # There every transaction sets them for itself (transaction_settings); TimeZone PgBouncer keeps.
    client_pid = getattr(getattr(dbapi_connection, "info", None), "backend_pid", None)
    if client_pid is not None and client_pid != server_pid:
        connection_record.info[_POOLED] = (
            f"SELECT set_config('synchronous_commit', 'on', true), set_config('lock_timeout', '{int(lock_ms)}', true), "
            f"set_config('idle_in_transaction_session_timeout', '{int(idle_ms)}', true), "
            f"set_config('statement_timeout', '{int(statement_ms)}', true)")


#: Key of a connection record's ``info``: the statement that makes the settings of
#: :func:`session_settings` a transaction's own, on a connection through a pooler.
_POOLED = "tuner_transaction_settings"


def transaction_settings(conn) -> None:
    """SQLAlchemy's ``begin`` hook of a PostgreSQL storage: on a connection through a connection
    pooler (:func:`session_settings` found one), the session's settings made the transaction's own
    (``set_config(..., true)``, as ``SET LOCAL``) as its first statement, one round trip, so they hold
    on whichever server connection PgBouncer's transaction mode runs it. Nothing on a direct one."""
    statement = conn.connection.info.get(_POOLED)
    if statement is None:
        return
    import sqlalchemy as sa

    dbapi = conn.dialect.loaded_dbapi
    dbapi_connection = conn.connection.dbapi_connection
    limit = unarmed_reply_limit_s()
    cut = None
    try:
        cursor = dbapi_connection.cursor()  # the driver begins the transaction with it
        try:
            with bounded(dbapi_connection, limit) as cut:  # PgBouncer queues it when its server is gone
                cursor.execute(statement)
        finally:
            cursor.close()
    except dbapi.Error as exc:  # as SQLAlchemy wraps a statement's: an outage is told and retried as one
        if cut is not None and cut.is_set():
            raise no_reply(limit, statement, cause=exc) from None
        raise sa.exc.DBAPIError.instance(statement, None, exc, dbapi.Error, dialect=conn.dialect) from exc


def reply_limit_s() -> float:
    """How long one attempt of a patient PostgreSQL call waits for its reply before its sessions
    are cut (:mod:`tuner.engine.reply_watch`): twice the lock wait, which the server ends first, and
    at least :data:`MIN_REPLY_WAIT_S`, so a short patience does not cut a statement that is merely
    slow on a loaded machine.

    Inside :func:`tuner.engine.patience.fail_fast` (the calls made while a server measures: the
    pruning decision between two stages, the check of the study before the journal entry) the
    bound is :data:`MIN_REPLY_WAIT_S` alone: such a call must not hold the measurement up, and
    twice the lock wait held it on a frozen server (QA, qa154: every process of the cluster
    stopped with SIGSTOP mid-suite at ``TUNER_STORAGE_PATIENCE_S=10``, the suite stood still 30 s
    between two stages, the 20 s reply wait then a connect timeout; at the default patience the
    reply wait is 120 s). The check of the study before the journal entry waits the same way, the
    finished measurement in memory alone meanwhile. A lock another session holds ends such a
    call at this bound too: it is not retried either way."""
    from .patience import failing_fast

    if failing_fast():
        return MIN_REPLY_WAIT_S
    return statement_limit_s()


def unarmed_reply_limit_s() -> float:
    """How long a statement no patient call arms waits for its reply before its session is cut
    (:class:`tuner.engine.reply_watch.StatementBound`: the read commands, ``create``, the probes
    that open a storage, a new session's settings): the lock wait and :data:`MIN_REPLY_WAIT_S`
    more (70 s by default; 16 s at ``TUNER_STORAGE_PATIENCE_S=6``). Longer than the lock wait, so a
    lock another session holds is said as that lock (the server cancels the wait first); shorter
    than a run's :func:`reply_limit_s` (twice the lock wait), since a read is not retried and a
    user waits for its line, and than PgBouncer's ``query_wait_timeout`` (120 s), whose "server
    closed the connection unexpectedly" named no cause (QA, qa183)."""
    return lock_wait_s() + MIN_REPLY_WAIT_S


def statement_limit_s() -> float:
    """The ``statement_timeout`` of every tuner session (seconds): twice the lock wait and at least
    :data:`MIN_REPLY_WAIT_S`, the reply watch's bound on a patient call, whatever the calling
    thread (the connect hook may run inside ``fail_fast``, whose calls the watch bounds sooner)."""
    return max(MIN_REPLY_WAIT_S, 2.0 * lock_wait_s())


def lock_wait_s() -> float:
    """How long a statement waits for a lock before the server cancels it: :data:`PG_LOCK_TIMEOUT_S`,
    at most the patience (read now)."""
    from .patience import patience_s

    return min(PG_LOCK_TIMEOUT_S, patience_s())


def idle_in_transaction_s() -> float:
    """How long a session of the tuner may sit idle inside a transaction before the server ends it:
    half the lock wait (:func:`lock_wait_s`, read now), so a lock a frozen worker holds is let go
    before another session's wait for it is cancelled, and at least
    :data:`MIN_IDLE_IN_TRANSACTION_S` (below a patience of 10 s the floor is the longer: the waiting
    session's lock wait is cancelled first, and retried as an outage within the patience)."""
    return max(MIN_IDLE_IN_TRANSACTION_S, lock_wait_s() / 2.0)
