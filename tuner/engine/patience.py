"""A storage that rides out outages: every call of a running worker retries transient errors.

A night of trials must not die because PostgreSQL restarted, a backup held an SQLite lock past the
busy timeout, or the database file was briefly read-only or moved away. :class:`PatientRDBStorage`
is Optuna's ``RDBStorage`` with every method that talks to the database wrapped: a transient error
(:func:`is_transient`) is retried with backoff (0.5 s doubling, at most 10 s between tries) until the
call succeeds or :func:`patience_s` has passed since its first failure; then
:class:`StorageUnavailable` is raised (the URL redacted, the driver's error scrubbed), which the
worker turns into one line and a non-zero exit, its measurement safe in the local journal
(:mod:`tuner.engine.journal`). Anything else (a bad value, a missing study) is raised at once.

Contracts:

* Retrying is safe because every write the engine makes is idempotent (attributes are upserts) or
  checked: a ``set_trial_state_values`` whose first attempt committed before the connection broke
  finds the trial already in the state and values it asked for, and returns ``True`` instead of
  raising ``UpdateFinishedTrialError``. One narrow window stays: a ``create_new_trial`` of the sampler's
  whose commit landed but whose reply was lost leaves one extra trial, never a wrong value (a RUNNING
  trial no worker named, failed and not queued: it has no parameters). A WAITING trial's start no
  longer does: :func:`tuner.engine.asktell.take_queued` finds its own landed start by its start time,
  and a reaper's FAIL (:func:`tuner.engine.workers.fail_running`) its own by its completion time.
* A trial created from a template (Optuna's ``add_trial`` and ``enqueue_trial``: a measurement
  re-homed, a setting queued again, a seed) is the one write that is neither: its retry would add
  the trial twice (QA: a re-homed measurement stored twice, counted as two launches and averaged
  with itself as a repeat). Each such creation carries a creation id (the system attribute
  :data:`CREATED_AS`), and an attempt that finds a trial with that id in the database (an earlier
  attempt's commit landed) returns it instead of adding another; Optuna's own retry of a failed
  commit inside ``_create_new_trial`` goes through the same check.
* The heartbeat thread (:class:`tuner.engine.workers.Heartbeat`) never waits: it beats inside
  :func:`fail_fast`, so a beat fails at once and is tried again a second later; the thread never
  blocks or dies. A beat of the main thread waits like any other call: the reaper beats for a live
  worker of this host (:func:`tuner.engine.workers.reap_dead_trials`), and that beat failing at
  once let the driver's error out of the worker, which exited "failed during the command" (QA).
* On PostgreSQL an attempt that gets no reply within :func:`tuner.engine.pg_sessions.reply_limit_s`
  has the storage's sessions cut (:mod:`tuner.engine.reply_watch`): its error is a :class:`NoReply`,
  an outage, so a server that froze under an open session is waited out like one that went down.
* After an error the storage drops its pooled connections, so a connection SQLite opened read-only
  while the file was read-only, or one to a PostgreSQL that restarted, is not reused.
* An SQLite file that disappears is an outage (not a silent write into a deleted file): each call
  first checks the file; one put back (a new inode) is reopened.
* :meth:`PatientRDBStorage.recently_unreachable` tells the reaper that this process saw an outage:
  other workers' heartbeats could not land either, so their trials are not judged dead by
  heartbeat until a grace period after it (:func:`tuner.engine.workers.reap_dead_trials`).
* ``on_outage(kind, info)``, when set, hears ``storage_down`` and ``storage_back`` from the main
  thread (the run's progress lines).
* Inside :func:`fail_fast` a transient error raises :class:`StorageUnavailable` at once: for calls
  made while a server is measuring (the pruning decision between two stages of a suite), which
  must not hold the measurement up; their caller goes on without them. Such a failure is not said
  as ``storage_down`` (nothing is retried); the next call that waits says it.
  On PostgreSQL their wait for a reply is bounded by the floor of the reply watch (10 s), not by
  twice the lock wait (:func:`tuner.engine.pg_sessions.reply_limit_s`).

Knob: ``TUNER_STORAGE_PATIENCE_S`` (whole seconds, default 600, the same on every worker is wise).

Why one module of over 400 lines: what counts as an outage, the retry loop and the storage whose
every call goes through it are one contract (which call is retried, for how long, and what a retry
may assume of an attempt that failed); split, each part would have to restate the others.
"""

from __future__ import annotations

import logging
import os
import random
import threading
import time
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Callable

from optuna.storages import RDBStorage

from .env_numbers import seconds_from_env
from .orphan_rows import drop_orphan_rows
from .reply_watch import NoReply, ReplyWatch

#: Default patience: how long one storage call of a running worker keeps retrying (seconds).
DEFAULT_PATIENCE_S = 600
#: Longest pause between two tries (seconds); the first pause is half a second.
MAX_PAUSE_S = 10.0


def patience_s() -> int:
    """``$TUNER_STORAGE_PATIENCE_S`` (whole seconds > 0), else :data:`DEFAULT_PATIENCE_S`; read on
    every call."""
    return seconds_from_env("TUNER_STORAGE_PATIENCE_S", DEFAULT_PATIENCE_S)


class StorageUnavailable(RuntimeError):
    """The storage did not answer (or refused writes: a read-only database) within the patience.
    The message names the storage (redacted) and the last error (scrubbed); nothing in it is a
    password. ``journal_dir``: where the worker's journal is, when the caller knows it."""

    journal_dir: Path | None = None

    def __init__(self, storage: str, waited_s: float, error: str):
        self.storage, self.waited_s, self.error = storage, waited_s, error
        # a database that answered, refusing writes (said() named it so), is not said to be silent
        # (QA, qa163: "did not answer for 1 s ... ReadOnlySqlTransaction")
        state = "refused writes" if READ_ONLY_HINT in error else "did not answer"
        super().__init__(f"storage {storage} {state} for {waited_s:.0f} s (TUNER_STORAGE_PATIENCE_S="
                         f"{patience_s()}): {error}")


class StorageGone(OSError):
    """The SQLite file of the storage is not there (deleted or moved): an outage, retried."""


#: Words of SQLite's errors that pass: a lock, a read-only or missing file, a full disk.
_SQLITE_TRANSIENT = ("locked", "busy", "readonly", "read-only", "unable to open", "disk i/o", "no such table",
                     "disk is full", "cannot start a transaction", "cannot commit")
#: Driver packages whose OperationalError / InterfaceError mean the connection or server, not the query.
_DRIVERS = ("psycopg2", "psycopg", "pg8000", "asyncpg", "sqlite3", "pymysql", "MySQLdb")


def is_transient(exc: BaseException) -> bool:
    """Whether ``exc`` (or what caused it) is an outage worth waiting for: the connection lost or
    refused, the server shutting down or starting up, a lock past the busy timeout, a read-only,
    full or missing SQLite file, a PostgreSQL database or server refusing writes (read-only).
    Optuna wraps SQLAlchemy's errors in ``StorageInternalError``; the chain of causes is followed."""
    from sqlalchemy import exc as sa

    for e in causes(exc):
        if isinstance(e, StorageUnavailable):
            return False
        if isinstance(e, (StorageGone, NoReply)):
            return True
        if isinstance(e, sa.DBAPIError) and e.connection_invalidated:
            return True
        if isinstance(e, (sa.DisconnectionError, sa.TimeoutError, sa.PendingRollbackError)):
            return True
        if type(e).__name__ in ("OperationalError", "InterfaceError") and (
                isinstance(e, sa.DBAPIError) or type(e).__module__.split(".")[0] in _DRIVERS):
            return _transient_text(e)
        if read_only_refusal(e):
            return True
    return False


#: PostgreSQL's SQLSTATE for a write refused by a read-only transaction (``read_only_sql_transaction``):
#: a hot standby (a failover under way, the URL's host not yet the new primary) or a database set
#: ``default_transaction_read_only`` for maintenance. psycopg2 raises it as an ``InternalError``,
#: not an ``OperationalError``, so the rule above missed it: a worker mid-trial ended "failed during
#: the command" and the measurement in flight was lost (QA, qa100). It is what SQLite's read-only
#: file is (retried): nothing the worker wrote is wrong, the database will take it once writable.
READ_ONLY_SQLSTATE = "25006"


def read_only_refusal(e: BaseException) -> bool:
    """Whether ``e`` (a driver's error, or SQLAlchemy's wrapping one) is PostgreSQL refusing a
    write because the database or server is read-only (:data:`READ_ONLY_SQLSTATE`)."""
    from .urls import sqlstate

    return sqlstate(e) == READ_ONLY_SQLSTATE


def refuses_writes(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it wraps) is a read-only refusal (:func:`read_only_refusal`): the
    database answers and refuses writes, which ``storage_down`` says as such (its info's
    ``refuses_writes``), not as a storage that "does not answer" (QA, qa158)."""
    return any(read_only_refusal(e) for e in causes(exc))


#: Said after a read-only refusal: the database answers, and what makes it take writes again.
READ_ONLY_HINT = ("the database refuses writes: a hot standby, or default_transaction_read_only set; it must "
                  "be made writable")


#: PostgreSQL's SQLSTATE for a statement cancelled by ``lock_timeout`` (``lock_not_available``):
#: another session holds a lock on the study's tables past the wait every tuner session allows
#: (:data:`tuner.engine.pg_sessions.PG_LOCK_TIMEOUT_S`).
LOCK_SQLSTATE = "55P03"
#: Said after a lock wait ran out: who is in the way, and where to see it (QA, qa106: the worker hung).
LOCK_HINT = ("another session holds a lock on the study's tables (LOCK TABLE, a migration, a transaction "
             "left open): see pg_locks and pg_stat_activity, and end it")


#: What a PostgreSQL server says when it has no connection slot for a new session: every slot of
#: ``max_connections`` taken ("sorry, too many clients already"), only the superuser's reserved ones
#: left ("remaining connection slots are reserved ..."), or a database's or role's ``CONNECTION
#: LIMIT`` reached ("too many connections for ..."); src/backend/utils/init/postinit.c. A
#: connection refused so carries no SQLSTATE in psycopg2, hence the words.
SLOTS_WORDS = ("too many clients", "connection slots are reserved", "too many connections for")
#: Said after a server out of connection slots (QA, qa154: the lines said only PostgreSQL's words).
#: A worker keeps 4 sessions of its own open (its study's and its baseline study's storages, their
#: heartbeats): a role's CONNECTION LIMIT of 3 stopped a lone worker at its start (QA, qa154).
SLOTS_HINT = ("the server has no connection slot free (max_connections, or a database's or role's CONNECTION "
              "LIMIT): other clients hold them, or the workers' own sessions (4 each) reach the limit; see "
              "pg_stat_activity and end idle sessions, or raise the limit")


#: Said after a database a ``DROP DATABASE`` left half-dropped (see :data:`_PERMANENT`): PostgreSQL's
#: own hint ("Use DROP DATABASE to drop invalid databases") is not on the error's first line.
INVALID_DB_HINT = ("a DROP DATABASE of it was cut short: PostgreSQL only lets it be dropped; drop it and "
                   "create the study again, or point the URL at another database")


#: Said after a database closed to connections (``ALTER DATABASE NAME WITH ALLOW_CONNECTIONS false``:
#: "database ... is not currently accepting connections", src/backend/utils/init/postinit.c
#: CheckMyDatabase, beside the invalid database's refusal; see :data:`_PERMANENT`).
CLOSED_DB_HINT = ("the database is closed to connections (ALLOW_CONNECTIONS false): its owner or a superuser "
                  "opens it with ALTER DATABASE ... WITH ALLOW_CONNECTIONS true, or point the URL at another "
                  "database")


#: What libpq says when the URL asks for SSL (``sslmode=require``, ``verify-ca``, ``verify-full``) and
#: the server has none (fe-connect.c): refused before any session, on every try; see :data:`_PERMANENT`.
NO_SSL_WORDS = "server does not support ssl, but ssl was required"
#: Said after it (QA, qa167: a cloud database's URL, ``?sslmode=require``, pointed at a server without
#: SSL was waited out for the whole patience, "did not answer", exit 75).
NO_SSL_HINT = ("the storage URL asks for SSL (sslmode) and this server has none: drop sslmode from the URL "
               "(or set sslmode=prefer), or enable ssl on the server")


#: What PostgreSQL says when no schema of the session's search_path exists to make the study's
#: tables in ("no schema has been selected to create in", src/backend/catalog/namespace.c; SQLSTATE
#: 3F000): a schema name mistyped in the URL's ``options=-csearch_path%3D...`` or the role's
#: ``search_path``, or one not created yet.
NO_SCHEMA_WORDS = "no schema has been selected to create in"
#: Said after it (QA, qa176: `tuner study create` and `tuner doctor` said PostgreSQL's words alone).
NO_SCHEMA_HINT = ("no schema of the search_path exists (the URL's options=-csearch_path%3D..., or the role's "
                  "ALTER ROLE ... SET search_path): fix the schema's name, or create it: CREATE SCHEMA NAME "
                  "AUTHORIZATION ROLE")


#: What PgBouncer says to a URL with a startup parameter it does not pass on (``options``, as in
#: ``?options=-csearch_path%3Dtuner``) and is not told to ignore (its ``ignore_startup_parameters``;
#: pgbouncer's src/client.c): refused before any session, on every try; see :data:`_PERMANENT`.
STARTUP_PARAM_WORDS = "unsupported startup parameter"
#: Said after it (QA, qa176: `tuner study create` said "run it again once the storage answers" and
#: `tuner study run` waited out its whole patience for a refusal no wait ends). Ignoring the
#: parameter in PgBouncer is no fix: the search_path would be dropped, and the tables made in public.
STARTUP_PARAM_HINT = ("a connection pooler (PgBouncer) refuses the URL's options= parameter: drop it from the URL "
                      "and set the schema on the role instead (ALTER ROLE ... SET search_path = SCHEMA), or "
                      "connect to PostgreSQL directly")


#: Said after a full disk (SQLite's file, or a database server's own disk).
DISK_FULL_HINT = "the disk is full: free space on it"


#: What PostgreSQL says when the role may not use or create in the schema the study's tables are in
#: or go to ("permission denied for schema %s", src/backend/catalog/aclchk.c; SQLSTATE 42501).
SCHEMA_REFUSED_WORDS = "permission denied for schema "


def schema_refused(exc: BaseException, role: str | None = None) -> str | None:
    """The fix when PostgreSQL refused ``role`` (the URL's, unnamed when None) the schema of the
    study's tables (no CREATE on it: a fresh database of another owner on PostgreSQL 15+, whose
    ``public`` only its owner may create
    in; or no USAGE); None for any other error. QA (qa176): `tuner study create` as such a role said
    "no rights on the study's tables (another role's) ... GRANT SELECT, INSERT ... ON ALL TABLES IN
    SCHEMA public", a grant on tables that do not exist, which changes nothing; `tuner doctor` said
    "check the URL, the server and the user's rights"."""
    for e in causes(exc):
        text = str(getattr(e, "orig", None) or e)
        if SCHEMA_REFUSED_WORDS in text:
            schema = text.split(SCHEMA_REFUSED_WORDS, 1)[1].split()[0].strip('".') or "public"
            who, name = (f"the role {role}", role) if role else ("the URL's role", "<role>")
            return (f"{who} may not create the study's tables in schema {schema} (PostgreSQL 15 and later let "
                    f"only the database's owner create in public): have the database's owner run GRANT USAGE, "
                    f"CREATE ON SCHEMA {schema} TO {name}, or give the study a schema of its own: CREATE SCHEMA "
                    f"tuner AUTHORIZATION {name}, and add ?options=-csearch_path%3Dtuner to the URL")
    return None


#: PostgreSQL's SQLSTATE for a write its own disk refused (``disk_full``: "could not extend file
#: ...: No space left on device", src/backend/storage/smgr/md.c), a psycopg2 ``DiskFull``.
DISK_FULL_SQLSTATE = "53100"


def disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` (or an error it wraps) is a full disk: SQLite's SQLITE_FULL, ENOSPC, EDQUOT,
    or a PostgreSQL server's own disk (:data:`DISK_FULL_SQLSTATE`; QA, qa154: its lines said
    "DiskFull: could not extend file ..." and no fix, a tablespace's disk filled under a worker)."""
    import errno

    from .urls import sqlstate

    full = (errno.ENOSPC, errno.EDQUOT)
    return any("database or disk is full" in str(e) or getattr(e, "errno", None) in full
               or sqlstate(e) == DISK_FULL_SQLSTATE
               for cause in causes(exc) for e in (cause, getattr(cause, "orig", None) or cause))


def said(exc: BaseException, describe: Callable[[BaseException], str]) -> str:
    """``describe(exc)`` (the error without the password), with what fixes a read-only refusal
    (:data:`READ_ONLY_HINT`), a lock wait run out (:data:`LOCK_HINT`), a server out of connection
    slots (:data:`SLOTS_HINT`), a database left invalid (:data:`INVALID_DB_HINT`) or closed to
    connections (:data:`CLOSED_DB_HINT`), SSL the server lacks (:data:`NO_SSL_HINT`), a startup
    parameter a pooler refuses (:data:`STARTUP_PARAM_HINT`), a search_path of no schema
    (:data:`NO_SCHEMA_HINT`), a schema the
    role may not create in (:func:`schema_refused`) or a full disk (:data:`DISK_FULL_HINT`): "did not answer ...
    ReadOnlySqlTransaction" or "... database or disk is full" alone named no fix (QA)."""
    from .urls import sqlstate

    text = describe(exc)
    if any(read_only_refusal(e) for e in causes(exc)):
        return f"{text} ({READ_ONLY_HINT})"
    if any(sqlstate(e) == LOCK_SQLSTATE for e in causes(exc)):
        return f"{text} ({LOCK_HINT})"
    if any(word in str(e).lower() for e in causes(exc) for word in SLOTS_WORDS):
        return f"{text} ({SLOTS_HINT})"
    if any("cannot connect to invalid database" in str(e) for e in causes(exc)):
        return f"{text} ({INVALID_DB_HINT})"
    if any(CLOSED_DB_WORDS in str(e) for e in causes(exc)):
        return f"{text} ({CLOSED_DB_HINT})"
    if any(NO_SSL_WORDS in str(e).lower() for e in causes(exc)):
        return f"{text} ({NO_SSL_HINT})"
    if any(STARTUP_PARAM_WORDS in str(e) for e in causes(exc)):
        return f"{text} ({STARTUP_PARAM_HINT})"
    if any(NO_SCHEMA_WORDS in str(e) for e in causes(exc)):
        return f"{text} ({NO_SCHEMA_HINT})"
    if (schema := schema_refused(exc)) is not None:
        return f"{text} ({schema})"
    return f"{text} ({DISK_FULL_HINT})" if disk_full(exc) else text


def database_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the database's: SQLAlchemy's errors (the driver's inside) and Optuna's
    ``StorageInternalError`` wrapping them, transient or not."""
    from optuna.exceptions import StorageInternalError
    from sqlalchemy.exc import SQLAlchemyError

    return isinstance(exc, (StorageInternalError, SQLAlchemyError))


def storage_error(exc: BaseException) -> bool:
    """Whether ``exc`` came from the storage: :func:`database_error`, or an outage past the patience
    (:class:`StorageUnavailable`). A call made while a server measures
    (:func:`fail_fast`) passes over such an error as over an outage: the password changed, the
    role's CONNECT revoked or the database dropped under a running worker must not cost the
    measurement in flight (QA, qa100: it ended the suite before its journal entry was written).
    The finish, after the journal entry, meets the same error and the worker stops there."""
    return isinstance(exc, StorageUnavailable) or database_error(exc)


def storage_stop_line(exc: BaseException, url: str) -> str:
    """What stopped a running worker's storage, for its one line: an outage past the patience
    (``StorageUnavailable``'s own message), or a database error that is no outage (the patient
    storage raised it at once: :func:`is_transient` says no): the role's password changed, its
    CONNECT revoked, the database renamed or dropped under it (:data:`_PERMANENT`'s words), or any
    other error of the database's (a corrupt file) -- then the storage (redacted), the error (its
    password scrubbed) and what fixes it: the URL and the role's rights for the first kind only.
    Any other exception is raised again, as it is.
    QA (qa100): the worker said "failed during the command ... a study run rides such outages out;
    this command does not", in a study run."""
    from .urls import describe_error, redact, resolve_url

    if isinstance(exc, StorageUnavailable):
        return str(exc)
    if not database_error(exc):
        raise exc
    if url.startswith("$"):  # ${TUNER_STORAGE}: the URL it names
        url = resolve_url(url)
    text = describe_error(exc, url)  # the URL redacted, its password scrubbed in every form
    if any(word in text.lower() for word in _PERMANENT):
        return (f"storage {redact(url) or 'storage'} refused this worker ({text[:300]}); no wait fixes that: "
                "check the storage URL (its password, role and database) and the role's rights on the "
                "server, then run again")
    # any other error of the database's own (a corrupt SQLite file, a constraint, a type): no URL or
    # role fixes it, and naming them sent the user to the wrong place (QA: "file is not a database")
    return (f"storage {redact(url) or 'storage'} failed this worker ({text[:300]}); it is no outage, so no "
            "wait fixes it: fix what the database says, then run again")


def causes(exc: BaseException | None):
    """``exc``, then each error it was raised from or while handling (``__cause__``, else
    ``__context__``), each once: Optuna's ``StorageInternalError`` and SQLAlchemy's errors wrap the
    driver's this way."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


#: What a database server says when the URL itself is wrong (credentials, database, role): no
#: wait makes it right, so the worker stops at once instead of waiting out the patience.
#: A role set ``NOLOGIN`` ("role ... is not permitted to log in") is one of them, as a ``CONNECT``
#: revoked is: it was waited out for the whole patience and said as "did not answer" (QA, qa106).
#: Not "too many connections for role": a ``CONNECTION LIMIT`` frees up as sessions end.
#: A database a ``DROP DATABASE`` left half-dropped ("cannot connect to invalid database", PostgreSQL
#: 15.4+, src/backend/utils/init/postinit.c; its fix is to drop it) is one too: it was waited out
#: for the whole patience and said as "did not answer" (QA, qa154: a DROP whose checkpoint failed
#: on a full tablespace left it so). A database closed to connections (``ALLOW_CONNECTIONS false``,
#: :data:`CLOSED_DB_HINT`) is one too, as a CONNECT revoked from every role: no wait opens it (QA,
#: qa167: waited out for the whole patience, "did not answer", exit 75). Not PostgreSQL's "the database
#: system is not yet accepting connections" (a server starting up) nor "... is not accepting
#: connections" (a standby without hot standby): those are the server's, and pass. Nor is SSL the
#: URL asks for and the server lacks (:data:`NO_SSL_WORDS`) an outage: only the URL or the server's
#: configuration changes it.
#: A ``reject`` line of pg_hba.conf ("pg_hba.conf rejects connection for host ...", auth.c) is the
#: administrator's rule as much as a missing entry: it was waited out for the whole patience (QA, qa167).
CLOSED_DB_WORDS = "is not currently accepting connections"
_PERMANENT = ("password authentication failed", "authentication failed", "no password supplied",
              "does not exist", "no pg_hba.conf entry", "pg_hba.conf rejects connection", "permission denied",
              "invalid dsn", "invalid connection option", "is not permitted to log in",
              "cannot connect to invalid database", CLOSED_DB_WORDS, NO_SSL_WORDS, STARTUP_PARAM_WORDS)


def _transient_text(e: BaseException) -> bool:
    orig = getattr(e, "orig", e)
    return _transient_words(type(orig).__module__.split(".")[0], str(orig))


def _transient_words(driver: str, text: str) -> bool:
    """Whether a ``driver`` (``sqlite3``, ``psycopg2``, ...) OperationalError saying ``text`` is an outage."""
    text = text.lower()
    if driver != "sqlite3":
        # PostgreSQL (and others): an OperationalError is the server or the connection, unless it
        # says the URL is wrong (a restarting server says "the database system is starting up")
        return not any(word in text for word in _PERMANENT)
    return any(word in text for word in _SQLITE_TRANSIENT)


class QuietOutageFallback(logging.Filter):
    """Drops Optuna's "Caught an error from sqlalchemy: ... Falling back to a slower alternative."
    when the error is an outage. Optuna (``optuna/storages/_rdb/storage.py``, ``_get_trials``) reads
    any OperationalError of its trial query as too many SQL variables and queries again; when the
    database went down between its two queries, that warning came before the tuner's own line about
    the outage (the patient storage's, or a command's one error line). Any other warning, that one
    for a real "too many SQL variables" included, passes. Installed by
    :func:`tuner.engine.storage.open_storage` on Optuna's storage logger."""

    PREFIX = "Caught an error from sqlalchemy: ("

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if not text.startswith(self.PREFIX):
            return True
        # "(sqlite3.OperationalError) database is locked\n[SQL: ...]", as SQLAlchemy renders a DBAPIError;
        # the class is any of the driver's OperationalError family (psycopg2.errors.AdminShutdown on a
        # PostgreSQL restart): Optuna catches SQLAlchemy's OperationalError only, which wraps just those
        error, _, said = text[len(self.PREFIX):].partition(")")
        driver = error.partition(".")[0]
        return not (driver in _DRIVERS and _transient_words(driver, said))


#: The one instance :func:`tuner.engine.storage.open_storage` installs.
QUIET_OUTAGE = QuietOutageFallback()


_local = threading.local()


def _patient(name: str, fn: Callable | None = None):
    """Wrap ``RDBStorage.<name>`` (or ``fn``, a function of the storage) so it retries transient
    errors (see the module docstring)."""
    own = fn

    def call(self, *args, **kwargs):
        fn = own or getattr(RDBStorage, name)  # looked up per call: Optuna's method as it is now
        if getattr(_local, "inside", False):  # a storage method calling another: the outer one retries
            return fn(self, *args, **kwargs)
        _local.inside = True
        try:
            return self._patiently(name, fn, args, kwargs)
        finally:
            _local.inside = False

    call.__name__ = name
    call.__doc__ = (own or getattr(RDBStorage, name)).__doc__
    return call


#: Every RDBStorage method that talks to the database (what ``_CachedStorage`` and the engine call).
_DB_METHODS = (
    "create_new_study", "delete_study", "set_study_user_attr", "set_study_system_attr",
    "get_study_id_from_name", "get_study_name_from_id", "get_study_directions", "get_study_user_attrs",
    "get_study_system_attrs", "get_all_studies", "create_new_trial", "_create_new_trial", "set_trial_param",
    "_set_trial_param", "get_trial_id_from_study_id_trial_number", "get_trial_number_from_id",
    "get_trial_param", "set_trial_state_values", "set_trial_intermediate_value", "set_trial_user_attr",
    "set_trial_system_attr", "get_trial", "get_all_trials", "_get_trials", "get_n_trials", "get_best_trial",
    "_get_best_trial_id", "get_trial_params", "get_trial_user_attrs", "get_trial_system_attrs",
    "record_heartbeat", "_get_stale_trial_ids",
)


def _set_trial_attrs(storage: RDBStorage, trial_id: int, user: dict, system: dict | None = None) -> None:
    """Write a trial's ``user`` and ``system`` attributes in one transaction: all or none. Raises what
    ``set_trial_user_attr`` raises (``UpdateFinishedTrialError`` when the trial is finished,
    ``KeyError`` when it is gone); as a :class:`PatientRDBStorage` method it is retried like any call
    (an upsert of the same values: a retry after a commit whose answer was lost writes nothing new).
    Optuna commits each attribute on its own: a measurement's ~40 figures took ~40 commits, an fsync
    each on SQLite and a round trip each on PostgreSQL."""
    # RDBStorage.set_trial_user_attr's own steps (optuna/storages/_rdb/storage.py), in one session
    from optuna.storages._rdb import models
    from optuna.storages._rdb.storage import _create_scoped_session

    with _create_scoped_session(storage.scoped_session, True) as session:
        # (the helper rolls back on any error: a value json cannot write leaves none of them)
        for model, attrs in ((models.TrialUserAttributeModel, user), (models.TrialSystemAttributeModel, system)):
            for key, value in (attrs or {}).items():
                storage._set_trial_attr_without_commit(session, model, trial_id, key, value)


#: The system attribute naming one creation of a trial from a template (see the module docstring).
CREATED_AS = "tuner:created_as"


class _CreationOutage(Exception):
    """An outage met inside Optuna's trial creation, carried past Optuna's own retry of it
    (:func:`_one_creation`); ``error`` is SQLAlchemy's error, raised again outside."""

    def __init__(self, error: BaseException):
        super().__init__(str(error))
        self.error = error


def _creation_outage(context):
    """SQLAlchemy's ``handle_error`` hook of a patient storage: inside :func:`_one_creation`, an
    outage becomes a :class:`_CreationOutage`, which is no SQLAlchemy error, so Optuna's creation
    neither wraps it (``StorageInternalError``) nor tries again."""
    error = context.sqlalchemy_exception
    if getattr(_local, "creating", False) and error is not None and is_transient(error):
        return _CreationOutage(error)
    return None


def _one_creation(storage: RDBStorage, study_id: int, template_trial=None):
    """One try of Optuna's ``RDBStorage._create_new_trial`` (looked up per call): an outage ends it.

    Why: Optuna tries a creation five times over, a random pause of up to 2 s between, on any
    ``StorageInternalError`` (optuna/storages/_rdb/storage.py, ``_create_new_trial``: "Deadlocks may
    occur"), so each try of the patience held five waits. Behind a lock (the study's row, which the
    creation takes ``FOR UPDATE``, held by a transaction left open in psql) that was five lock waits
    before the first line: a worker at ``TUNER_STORAGE_PATIENCE_S=6`` stood 33 s without a word,
    then said in one breath that the storage did not answer and that it gave up after 33 s (QA,
    qa136); at the default patience the first line came after five minutes, not one. The patient
    loop now retries it as every other call, a deadlock included (an ``OperationalError``)."""
    _local.creating = True
    try:
        return RDBStorage._create_new_trial(storage, study_id, template_trial)
    except _CreationOutage as outage:
        error = outage.error
        error.__cause__ = getattr(error, "orig", None)
        raise error from error.__cause__
    finally:
        _local.creating = False


class PatientRDBStorage(RDBStorage):
    """Optuna's ``RDBStorage`` whose database calls ride out outages (see the module docstring)."""

    def __init__(self, *args, **kwargs):
        import sqlalchemy as sa

        #: the cut of every attempt under way, any thread's (see _patiently's BaseException clause)
        self._cuts: set[threading.Event] = set()
        super().__init__(*args, **kwargs)
        sa.event.listen(self.engine, "handle_error", _creation_outage)

    shown_url = "storage"
    on_outage: Callable[[str, dict], None] | None = None
    _sqlite_file: Path | None = None
    _file_id: tuple[int, int] | None = None
    _last_trouble: float | None = None
    _down_since: float | None = None  #: since when calls fail (any thread)
    _announced: float | None = None  #: since when the main thread has said so (storage_down)
    reply_watch: ReplyWatch | None = None  #: bounds each attempt's wait for a reply (PostgreSQL)

    def watch(self, shown_url: str, sqlite_file: Path | None, describe: Callable[[BaseException], str]) -> None:
        """Name the storage for messages (redacted), the SQLite file to keep an eye on, and how to
        describe an error without the password."""
        self.shown_url, self._sqlite_file, self._describe = shown_url, sqlite_file, describe
        self._file_id = _file_id(sqlite_file) if sqlite_file else None

    def recently_unreachable(self, window_s: float) -> bool:
        """Whether any call of this process failed on an outage within the last ``window_s`` seconds."""
        last = self._last_trouble
        return last is not None and time.monotonic() - last < window_s

    # -- creating a trial once ----------------------------------------------------------------------
    def _create_new_trial(self, study_id: int, template_trial=None):
        if template_trial is not None and CREATED_AS not in template_trial.system_attrs:
            import copy
            import uuid

            template_trial = copy.deepcopy(template_trial)  # the caller's template is left as it was
            template_trial.system_attrs[CREATED_AS] = uuid.uuid4().hex
        return _create_patiently(self, study_id, template_trial)

    def _get_prepared_new_trial(self, study_id: int, template_trial, session):
        """Optuna's, called inside the creation's transaction (the study row locked): the trial an
        earlier attempt of the same creation committed, when there is one."""
        created_as = None if template_trial is None else template_trial.system_attrs.get(CREATED_AS)
        if created_as is not None:
            import json

            from optuna.storages._rdb import models

            attr, trial = models.TrialSystemAttributeModel, models.TrialModel
            held = (session.query(trial).join(attr, attr.trial_id == trial.trial_id)
                    .filter(trial.study_id == study_id, attr.key == CREATED_AS,
                            attr.value_json == json.dumps(created_as)).first())
            if held is not None:  # a study copied in the same database holds the id too: its own study's
                return held
        return super()._get_prepared_new_trial(study_id, template_trial, session)

    # -- several attributes in one transaction ----------------------------------------------------
    set_trial_attrs = _patient("set_trial_attrs", _set_trial_attrs)
    #: :func:`tuner.engine.orphan_rows.drop_orphan_rows`, retried as any call (idempotent)
    drop_orphan_rows = _patient("drop_orphan_rows", drop_orphan_rows)

    # -- the retry loop ---------------------------------------------------------------------------
    def _patiently(self, name: str, fn, args, kwargs):
        from optuna.exceptions import UpdateFinishedTrialError

        first_failure = None
        pause = 0.5
        patience = patience_s()
        outer = getattr(_local, "deadline", None)
        while True:
            attempt = time.monotonic()  # an SQLite lock wait ends with the patience (busy_timeout_s)
            _local.deadline = (first_failure if first_failure is not None else attempt) + patience
            cut = None
            try:
                self._check_file()
                with self._bounded() as cut:
                    if cut is not None:
                        self._cuts.add(cut)
                    result = fn(self, *args, **kwargs)
            except UpdateFinishedTrialError:
                # A finish whose first attempt committed before the connection broke: done.
                if first_failure is not None and name == "set_trial_state_values" and self._finished_as(*args, **kwargs):
                    return True
                raise
            except Exception as exc:
                if cut is not None and cut.is_set():  # the error is the cut's: say why it was cut
                    cause, exc = exc, NoReply(f"no reply within {cut.limit_s:.0f} s (the server frozen, a "
                                              "paused VM or a network dropping packets); its sessions were cut")
                    exc.__cause__ = cause
                if not is_transient(exc):
                    raise
                now = time.monotonic()
                self._last_trouble = now
                # from the start of the first failed try: its wait for an SQLite lock counts
                first_failure = first_failure if first_failure is not None else attempt
                self._outage_started(exc, patience)
                self._reset_connections()
                if getattr(_local, "fail_fast", False) or now - first_failure >= patience:
                    waited = now - first_failure
                    raise StorageUnavailable(self.shown_url, waited, said(exc, self._describe)) from None
                time.sleep(min(pause * random.uniform(0.8, 1.2), max(0.0, first_failure + patience - now)))
                pause = min(pause * 2, MAX_PAUSE_S)
                continue
            except BaseException:
                # Ctrl-C or SIGTERM (the signal module's handler runs once libpq's wait returns)
                # landing in an attempt the server never answered, its sessions cut by the reply
                # watch: the storage is away (unreachable_now), though no error of it was seen, so
                # the cleanup on the way out does not wait out the patience on it (QA, qa154: SIGTERM
                # to a worker whose PostgreSQL froze mid-suite, then exit 75 70 s later at a
                # patience of 60 s, "did not answer", instead of stopping at once).
                # The cut may be another call's (the watch cuts every session of the engine: the
                # heartbeat thread's beat, bounded sooner inside fail_fast), this attempt's own not
                # set: the signal then lands while the driver builds its error (psycopg2 decoding
                # "server closed the connection" in SQLAlchemy's do_ping at pool checkout), which it
                # replaces. Whether the storage was marked away hung on the other thread reaching
                # _outage_started first (QA, qa158: one run in three waited 57 s). Every attempt's
                # cut stays in _cuts until its except clauses have run, so a cut that fired is seen
                # here, or its own thread has marked the storage away already.
                if self._down_since is None and any(c.is_set() for c in list(self._cuts)):
                    self._down_since = time.monotonic()
                raise
            finally:
                if cut is not None:  # after the except clauses: a call cut is marked away before it leaves
                    self._cuts.discard(cut)
                _local.deadline = outer
            if first_failure is not None or self._down_since is not None or self._announced is not None:
                self._outage_ended()
            return result

    def _bounded(self):
        """One attempt's bound on waiting for a reply (:mod:`tuner.engine.reply_watch`), when the
        storage has a watch (PostgreSQL); else no bound (SQLite's waits end with its busy timeout)."""
        return self.reply_watch.armed() if self.reply_watch is not None else nullcontext()

    def _finished_as(self, trial_id, state, values=None) -> bool:
        # Patient itself: the server may go down again between the retry and this read, and an
        # error here would escape the retry loop (QA: "failed during the command" on a tell).
        trial = self._patiently("get_trial", RDBStorage.get_trial, (trial_id,), {})
        return trial.state == state and (values is None or list(trial.values or []) == [float(v) for v in values])

    def _check_file(self) -> None:
        if self._sqlite_file is None:
            return
        now = _file_id(self._sqlite_file)
        if now is None:
            raise StorageGone(f"the SQLite file {self._sqlite_file} is not there")
        if now != self._file_id:  # put back (a new file): connections to the old one must go
            self._file_id = now
            self._reset_connections()

    def _reset_connections(self) -> None:
        try:
            self.scoped_session.remove()
            self.engine.dispose()
        except Exception:  # noqa: BLE001 - closing a broken connection may fail too; the next try reconnects
            pass

    def _outage_started(self, exc: BaseException, patience: int) -> None:
        if self._down_since is None:
            self._down_since = time.monotonic()
        # Not inside fail_fast: that call is not retried (its caller goes on without it), so "retrying
        # for up to ..." would be untrue, and the next call that succeeds said "answers again after
        # 0.0 s" between two "does not answer" lines (QA, qa108: a flip-flop of lines in one outage).
        if (threading.current_thread() is threading.main_thread() and self._announced is None
                and not getattr(_local, "fail_fast", False)):
            self._announced = time.monotonic()
            self._notify("storage_down", {"storage": self.shown_url, "error": said(exc, self._describe),
                                          "patience_s": patience, "refuses_writes": refuses_writes(exc)})

    def _outage_ended(self) -> None:
        self._down_since = None
        if threading.current_thread() is threading.main_thread() and self._announced is not None:
            since, self._announced = self._announced, None
            self._notify("storage_back", {"storage": self.shown_url, "after_s": time.monotonic() - since})

    def _notify(self, kind: str, info: dict) -> None:
        if self.on_outage is not None:
            try:
                self.on_outage(kind, info)
            except Exception:  # noqa: BLE001 - a progress line must never fail a storage call
                pass

    @staticmethod
    def _describe(exc: BaseException) -> str:
        return type(exc).__name__  # replaced by watch() with one that scrubs the password


for _name in _DB_METHODS:
    if _name != "_create_new_trial":  # its own method names the creation first, then retries
        setattr(PatientRDBStorage, _name, _patient(_name))
_create_patiently = _patient("_create_new_trial", _one_creation)


def _file_id(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def open_patiently(shown_url: str, build: Callable[[], RDBStorage],
                   describe: Callable[[BaseException], str],
                   on_outage: Callable[[str, dict], None] | None = None,
                   silence: tuple[float, BaseException] | None = None) -> RDBStorage:
    """``build()``, retried on transient errors for up to the patience (a worker starting while the
    database restarts waits for it); :class:`StorageUnavailable` (naming ``shown_url``, the error as
    ``describe`` tells it) after that. ``on_outage`` hears ``storage_down`` once, at the first
    failure (a silent wait of minutes looks like a hang), and ``storage_back`` when it answers after
    that, with the info :attr:`PatientRDBStorage.on_outage` gets, and is then set on the storage
    returned. ``silence``: when and with what error the run's first question found the storage not
    answering (:func:`tuner.engine.silence.take_silence`): said at once, before a try that would
    wait out the connect timeout again, and the patience runs from then (QA, qa108)."""
    patience = patience_s()
    first = time.monotonic() if silence is None else silence[0]
    said_down = silence is not None and on_outage is not None
    if said_down:
        on_outage("storage_down", {"storage": shown_url, "error": said(silence[1], describe),
                                   "patience_s": patience, "refuses_writes": refuses_writes(silence[1])})
    pause = 0.5
    outer = getattr(_local, "deadline", None)
    while True:
        _local.deadline = first + patience  # an SQLite lock wait while building ends with the patience
        try:
            storage = build()
            storage.on_outage = on_outage
            if said_down and on_outage is not None:  # it failed before: said down, so say back
                on_outage("storage_back", {"storage": shown_url, "after_s": time.monotonic() - first})
            return storage
        except Exception as exc:
            if not is_transient(exc):
                raise
            waited = time.monotonic() - first
            if waited >= patience:
                raise StorageUnavailable(shown_url, waited, said(exc, describe)) from None
            if not said_down and on_outage is not None:
                on_outage("storage_down", {"storage": shown_url, "error": said(exc, describe),
                                           "patience_s": patience, "refuses_writes": refuses_writes(exc)})
            said_down = True
            time.sleep(min(pause, patience - waited))
            pause = min(pause * 2, MAX_PAUSE_S)
        finally:
            _local.deadline = outer


def busy_timeout_s(configured: float) -> float:
    """SQLite's busy timeout for a connection opened now: ``configured`` (``TUNER_SQLITE_TIMEOUT_S``),
    capped by what is left of the patience of the storage call (or opening) this thread is in, at
    least 50 ms (QA: patience 5 s with the 60 s busy timeout gave up after 58 s)."""
    deadline = getattr(_local, "deadline", None)
    return configured if deadline is None else max(0.05, min(configured, deadline - time.monotonic()))


@contextmanager
def fail_fast():
    """Within the block, this thread's storage calls do not wait out an outage: the first transient
    error raises :class:`StorageUnavailable` (see the module docstring)."""
    before = getattr(_local, "fail_fast", False)
    _local.fail_fast = True
    try:
        yield
    finally:
        _local.fail_fast = before


def failing_fast() -> bool:
    """Whether this thread's storage calls are inside :func:`fail_fast` now (calls that must not
    hold a measurement up: :func:`tuner.engine.pg_sessions.reply_limit_s` bounds their wait for a
    reply by its floor, not by twice the lock wait)."""
    return bool(getattr(_local, "fail_fast", False))


def unreachable_now(storage) -> bool:
    """Whether a study's storage is in an outage right now (its last call failed): cleanup on the
    way out of an interrupted trial then skips the storage rather than wait out the patience again
    (the trial is reaped and queued again by the next worker; a measurement is in the journal)."""
    backend = patient_backend(storage)
    return backend is not None and backend._down_since is not None


def patient_backend(storage) -> PatientRDBStorage | None:
    """The :class:`PatientRDBStorage` behind a study's storage (Optuna wraps it in a cache), if any."""
    backend = getattr(storage, "_backend", storage)
    return backend if isinstance(backend, PatientRDBStorage) else None
