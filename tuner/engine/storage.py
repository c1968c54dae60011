"""Where studies live: Optuna's RDB storage (an SQLite file by default, PostgreSQL for many nodes).

The URL may come from ``--storage``, from the study file, or from the environment: a value of the form
``${VAR}`` (or ``$VAR``) is read from that variable, and ``TUNER_STORAGE`` is the default variable, so a
PostgreSQL password never has to be written in a file or on a command line.

Passwords are never shown (:mod:`tuner.engine.urls`: URLs parsed and rendered with SQLAlchemy's
``URL``, errors from the database driver scrubbed of the password in every form).

Several workers (nodes) may open the same fresh PostgreSQL database at the same instant. Optuna's
``RDBStorage`` creates its tables on first use, and two concurrent ``CREATE TABLE`` on PostgreSQL
crash one of them (``UniqueViolation ... pg_type_typname_nsp_index``, reproduced by
tests/engine/test_distributed_storage.py). :func:`open_storage` therefore builds the storage under a
PostgreSQL advisory lock (one at a time per database; it takes milliseconds; a transaction's, so
it holds behind PgBouncer in transaction mode too), and on any database
retries a construction that lost a table-creation race. A running worker's storage rides out
outages (:mod:`tuner.engine.patience`).

Why one module of over 400 lines: it is one act, opening a storage, from the URL to the built
storage or the one line that says why it cannot be opened (a file this user cannot read, a role
PostgreSQL refuses, a full disk, an outage) and its fix; the reasons are read off the same error the
build raised, in the same ``except``.
"""

from __future__ import annotations

import functools
import logging
import random
import time
from contextlib import contextmanager
from typing import Callable

from ..config.files import not_a_file
from ..config.yamlfile import ConfigError
from .env_numbers import seconds_from_env
from .pg_sessions import reply_limit_s, session_settings, transaction_settings, unarmed_reply_limit_s
from .reply_watch import NoReply, ReplyWatch, StatementBound
from .urls import (connect_args, describe_error, driver_url, is_postgres, redact, resolve_url, scheme_problem,
                   scrub, sqlite_path)

__all__ = ["open_storage", "storage_label", "redact", "resolve_url", "driver_url", "is_postgres",
           "HEARTBEAT_INTERVAL_S", "HEARTBEAT_GRACE_S", "MAX_RETRY", "SQLITE_TIMEOUT_S"]


#: Heartbeat of running trials (seconds). A trial whose heartbeat is older than the grace period
#: belongs to a dead worker; it is failed and its parameters are queued again. Both may be set from
#: the environment (``TUNER_HEARTBEAT_INTERVAL_S``, ``TUNER_HEARTBEAT_GRACE_S``; the same on every
#: worker), e.g. to keep tests short; the grace period must exceed the interval.
HEARTBEAT_INTERVAL_S = seconds_from_env("TUNER_HEARTBEAT_INTERVAL_S", 10)
HEARTBEAT_GRACE_S = seconds_from_env("TUNER_HEARTBEAT_GRACE_S", 4 * HEARTBEAT_INTERVAL_S)
if HEARTBEAT_GRACE_S <= HEARTBEAT_INTERVAL_S:
    raise ConfigError("environment", "TUNER_HEARTBEAT_GRACE_S",
                      f"{HEARTBEAT_GRACE_S} s must exceed the heartbeat interval ({HEARTBEAT_INTERVAL_S} s), "
                      "or every running trial looks dead")
#: How often one configuration is re-queued after its worker died.
MAX_RETRY = 3
#: SQLite's busy timeout (seconds): how long a write waits for another process's lock before the
#: driver says "database is locked" (a running worker then retries, see tuner.engine.patience).
SQLITE_TIMEOUT_S = seconds_from_env("TUNER_SQLITE_TIMEOUT_S", 60)

#: PostgreSQL advisory-lock key held while a worker builds its storage (creates tables); any fixed
#: 64-bit number unlikely to clash with an application's own keys ("tuner-db" in ASCII).
_SCHEMA_LOCK_KEY = 0x74756E65722D6462
#: How long a worker waits for another to finish creating the tables.
SCHEMA_LOCK_TIMEOUT_S = 120.0
#: Attempts at building the storage when a table-creation race is lost anyway (non-PostgreSQL).
_CREATE_ATTEMPTS = 5


#: Every storage URL this process opened: what an error surfacing later must be scrubbed of
#: (:func:`storage_failure_line`).
OPENED: list[str] = []


def storage_failure_line(exc: BaseException, since: int = 0) -> str | None:
    """One line for a storage error that surfaced mid-command (the database went away after it was
    opened: SQLAlchemy's errors, Optuna's ``StorageInternalError``), naming the storages opened
    since ``OPENED[since]`` (the command's own: a process that runs several commands, as tests and
    scripts do with click's runner, opened others before), redacted, and every password this
    process opened scrubbed; None for any other exception."""
    from .patience import database_error, said

    if not database_error(exc):
        return None
    # said(): the fix of a lock held, a read-only database or a full disk, as the run's lines (QA, qa108)
    text = said(exc, lambda e: functools.reduce(scrub, OPENED, describe_error(e, OPENED[-1]) if OPENED
                                                else type(e).__name__)[:300])
    where = ", ".join(sorted({redact(u) or "" for u in OPENED[since:]})) or "the storage"
    return (f"storage {where} failed during the command ({text}); run it again once the storage answers "
            "(a study run rides such outages out; this command does not)")


def open_storage(url, *, create: bool = True, patient: bool = False,
                 on_outage: Callable[[str, dict], None] | None = None):
    """An Optuna ``RDBStorage`` with heartbeats and retry of dead workers' trials.

    An Optuna storage object is returned as it is (benchmarks pass an ``InMemoryStorage``).

    ``create=False`` (every command that reads or continues a study) never creates a storage: an
    SQLite file that does not exist is a :class:`ConfigError` ("no such storage"), and no file or
    folder is made. ``patient=True`` (a running worker) returns a
    :class:`tuner.engine.patience.PatientRDBStorage`: every storage call retries transient errors
    (connection lost, database locked, server restarting, SQLite file read-only or gone) for up to
    :func:`tuner.engine.patience.patience_s`, and opening it waits as long; past that it raises
    :class:`tuner.engine.patience.StorageUnavailable`. ``on_outage(kind, info)`` (patient only)
    hears ``storage_down`` and ``storage_back``, from the first attempt to open on
    (:func:`tuner.engine.patience.open_patiently`).

    SQLite gets a long lock timeout so several local workers can share one file; PostgreSQL gets
    ``pool_pre_ping`` so a worker survives a database restart overnight, and is built under an
    advisory lock so workers starting together on a fresh database do not race to create tables.
    Raises :class:`ConfigError` (URL redacted, password scrubbed) when the storage cannot be opened.
    """
    import optuna
    from optuna.storages import BaseStorage

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    from .patience import QUIET_OUTAGE

    # Optuna's storage logger (optuna/storages/_rdb/storage.py); adding the one filter again is a no-op.
    logging.getLogger("optuna.storages._rdb.storage").addFilter(QUIET_OUTAGE)
    if isinstance(url, BaseStorage):
        return url
    if url.startswith("$"):
        url = resolve_url(url)
    from ..config.study import sqlite_storage_problem

    # --storage as the study file's key (QA: a read created a file); a missing folder is no outage
    # (the commands name the flag or key first: tuner.cli.study_target.resolve_target)
    problem = scheme_problem(url) or sqlite_storage_problem(url)
    if problem:
        raise ConfigError("storage", "", problem)
    OPENED.append(url)
    if not create:
        try:
            _check_exists(url)
        except ConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - holds_tables lets only a statement with no reply through
            if not patient:  # the one line now, not a second wait in _open (a read is not retried)
                raise ConfigError("storage", redact(url) or "", f"cannot open: {describe_error(exc, url)}; run it "
                                  "again once the storage answers (`tuner study run` waits for it)") from None
            # a patient open waits for it (open_patiently), as for a server that refuses
    path = sqlite_path(url)
    made = path is not None and not path.exists()  # an empty file left on a full disk is this call's
    if patient:
        from .patience import open_patiently

        from .silence import take_silence

        return open_patiently(redact(url) or "", lambda: _open(url, patient=True, made=made),
                              lambda exc: describe_error(exc, url), on_outage, silence=take_silence(url))
    return _open(url, patient=False, made=made)


def storage_label(storage) -> str:
    """The URL of an opened storage, redacted ("" for one without a URL): journal entries name it."""
    backend = getattr(storage, "_backend", storage)
    return redact(getattr(backend, "url", None)) or ""


def _check_exists(url: str) -> None:
    path = sqlite_path(url)
    if path is not None and not path.is_file():
        # a FIFO, a device, a folder: there, but no database file (QA, qa167/qa169: /dev/null and a
        # FIFO were said not to exist)
        kind = not_a_file(path)
        what = "does not exist" if kind is None else f"is {kind}, not an SQLite database file"
        raise ConfigError(redact(url) or "", "", f"no such storage: {path} {what} (nothing was created); "
                          "check the path, or create the study first: tuner study create STUDY.yaml")
    if not holds_tables(url):
        # Optuna's RDBStorage creates its tables whenever it opens a database: a read there would
        # leave 13 empty tables behind (QA: status, list and export on an empty database did, and
        # status and run --dry-run on an SQLite file that is a database without them)
        raise ConfigError(redact(url) or "", "", "no such storage: the database holds no study (no Optuna "
                          "tables; nothing was created); check the URL, or create the study first: tuner "
                          "study create STUDY.yaml")


def _connect_args(url: str) -> dict:
    """:func:`tuner.engine.urls.connect_args` with this process's patience."""
    from .patience import patience_s

    return connect_args(url, patience_s())


def holds_tables(url: str) -> bool:
    """Whether the database at ``url`` (a database server's, or an existing SQLite file) holds
    Optuna's tables. Reads only; True when that cannot be told (no driver, the server down, a file
    that is no database: opening the storage then says so, or waits for it when patient)."""
    import sqlalchemy as sa

    try:
        engine = sa.create_engine(driver_url(url), poolclass=sa.pool.NullPool,
                                  connect_args=_connect_args(url))
    except (ImportError, ValueError, sa.exc.ArgumentError):  # no driver, or no URL it reads (a port "5x")
        return True
    _bound_statements(engine, url)
    try:
        with engine.connect() as conn:
            dropped = search_path_dropped(conn, url)
            if dropped is None:
                return sa.inspect(conn).has_table("studies")
    except (sa.exc.SQLAlchemyError, ValueError) as exc:  # ValueError: a URL the driver refuses (a NUL in it)
        if _no_answer(exc):
            raise  # opening it again would wait as long: the caller says it (open_storage)
        return True
    finally:
        engine.dispose()
    raise ConfigError("storage", redact(url) or "", dropped)


def _no_answer(exc: BaseException) -> bool:
    """Whether ``exc`` is a server's silence, not its answer: a statement's reply that never came
    (:class:`tuner.engine.reply_watch.NoReply`) or libpq's ``connect_timeout`` ("timeout expired",
    libpq's words: src/interfaces/libpq/fe-connect.c). QA (qa183): a read of a storage whose port
    accepts and never answers waited the connect timeout twice (21 s, not 10), once here and once
    more in the open that followed; a pooler with no server behind it, the reply bound twice."""
    orig = getattr(exc, "orig", None)
    return isinstance(orig, NoReply) or (orig is not None and "timeout expired" in str(orig))


def _bound_statements(engine, url: str) -> None:
    """Every statement of ``engine`` (a PostgreSQL one) bounded by
    :func:`tuner.engine.pg_sessions.unarmed_reply_limit_s`: see :class:`tuner.engine.reply_watch.StatementBound`."""
    if is_postgres(url):
        StatementBound(engine, unarmed_reply_limit_s)


def search_path_dropped(conn, url: str) -> str | None:
    """Why the schema the URL names (``?options=-csearch_path%3DSCHEMA``) is not the session's, with
    the fix; None when the URL names none, or the session has it. A connection pooler told to ignore
    the ``options`` startup parameter (PgBouncer's ``ignore_startup_parameters``, which guides give as
    the fix of its refusal) drops it in silence: the study's tables went to ``public``, a second study
    beside the one the nodes connecting directly used (QA, qa176). PostgreSQL records where a
    setting came from (``pg_settings.source``; ``client`` for a startup parameter, src/backend/utils/
    misc/guc.c), and the tuner never sets ``search_path`` itself, so no value is parsed here."""
    import re

    import sqlalchemy as sa

    from .urls import connect_url

    if not is_postgres(url):
        return None
    options = connect_url(url).query.get("options") or ""
    options = " ".join(options) if isinstance(options, tuple) else options
    if not re.search(r"(?:-c\s*|--)search_path=", options, flags=re.IGNORECASE):
        return None
    source = conn.execute(sa.text("SELECT source FROM pg_settings WHERE name = 'search_path'")).scalar()
    conn.rollback()
    if source == "client":
        return None
    # the fix first: tuner doctor shows the first 200 characters
    return (f"the URL's search_path (options=) did not reach the session (dropped by a pooler: PgBouncer's "
            f"ignore_startup_parameters): drop options and ALTER ROLE ... SET search_path = SCHEMA, or connect "
            f"directly; else the study is read and written in another schema (the session's search_path is "
            f"the {source or 'default'} one)")


def _open(url: str, patient: bool, made: bool = False):
    """Build the storage; ``made``: its SQLite file did not exist before this open, so an empty one a
    full disk left is removed (:func:`_drop_empty_file`)."""
    from .patience import disk_full, is_transient, said

    try:
        if is_postgres(url):
            with _schema_lock(url):
                return _build(url, patient)
        return _build_with_retry(url, patient)
    except ConfigError:
        raise
    except ModuleNotFoundError as exc:
        # No PostgreSQL driver: say how to install it, from the index or from a clone.
        raise ConfigError("storage", redact(url) or "", f"cannot open: no module {exc.name!r}; install the "
                          f"driver: pip install 'sglang-spec-tuner[postgres]' (from a clone: pip install -e "
                          f"'.[postgres]')") from None
    except Exception as exc:  # noqa: BLE001 - SQLAlchemy/driver errors carry the URL; never show it
        unreadable = _unreadable(url)
        if unreadable:
            # no outage: waiting, or running it again, opens it no better (QA, qa157: another user's
            # file of mode 0600 said "run it again once the storage answers")
            raise ConfigError("storage", redact(url) or "", f"cannot open: {unreadable}") from None
        refused = _role_refused(exc, url)
        if refused:
            raise ConfigError("storage", redact(url) or "", f"cannot open: {describe_error(exc, url)}; {refused}") from None
        path = sqlite_path(url) if disk_full(exc) else None
        dropped = path is not None and made and _drop_empty_file(path)
        if patient and is_transient(exc):
            raise  # open_patiently waits for the storage to answer
        fix = "" if path is None else (f"; free space on the disk of {path.parent} and run again"
                                       + (f" ({path.name} was not left there)" if dropped else ""))
        if not fix and is_transient(exc):  # QA: a server out of connection slots was said with no fix
            fix = "; run it again once the storage answers (`tuner study run` waits for it)"
        # said(): what frees a connection slot, ends a lock or makes the database writable, as a
        # run's lines say it (QA, qa154: "remaining connection slots are reserved ..." alone); a
        # full disk's fix is the one above
        text = describe_error(exc, url) if path is not None else said(exc, lambda e: describe_error(e, url))
        raise ConfigError("storage", redact(url) or "", f"cannot open: {text}{fix}") from None


def _unreadable(url: str) -> str | None:
    """Why this user cannot read the existing SQLite file of ``url`` (another user's, mode 0600: the
    open fails with SQLite's bare "unable to open database file"), with the fix; None when it can,
    or for any other storage (:func:`tuner.config.files.open_refused`)."""
    import os

    from ..config.files import open_refused

    path = sqlite_path(url)
    refused = None if path is None else open_refused(path, os.O_RDONLY)  # opened for reading, nothing read
    if refused is None:
        return None  # readable, gone, or no file: the open's own error says it
    return (f"{path} cannot be read by this user ({refused}); run as the user who can, or have "
            f"its owner let you read it (e.g. chmod g+r, and its group yours)")


def _role_refused(exc: BaseException, url: str) -> str | None:
    """The fix when PostgreSQL refuses the URL's role this database or its tables (another user's
    URL: SQLSTATE 42501, insufficient_privilege; a refused CONNECT comes at connection time, FATAL
    with no SQLSTATE in psycopg2's error, so by its text, PostgreSQL's "permission denied for database
    \"%s\"" of src/backend/utils/init/postinit.c); None for any other error. QA (qa159): "cannot open:
    InsufficientPrivilege: permission denied for table version_info" named no fix."""
    from .patience import causes, schema_refused
    from .urls import connect_url, sqlstate

    if not is_postgres(url):
        return None
    errors = list(causes(exc))
    no_connect = any("permission denied for database" in str(e) for e in errors)
    if not no_connect and not any(sqlstate(e) == "42501" for e in errors):
        return None
    try:
        parts = connect_url(url)
        role, database = parts.username or "(this user)", parts.database or "(its database)"
    except Exception:  # noqa: BLE001 - the URL opened, so it parses; a name is only for the line
        role, database = "this role", "this database"
    schema = schema_refused(exc, role)
    if schema is not None:  # not the tables' rights: none may exist yet (QA, qa176)
        return schema
    if no_connect:
        return (f"the role {role} may not connect to {database}: use the URL of a role that may (the one that "
                f"created the study), or have its owner run GRANT CONNECT ON DATABASE {database} TO {role}")
    return (f"the role {role} has no rights on the study's tables (another role's): use the URL of the role "
            f"that created the study, or have it run GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN "
            f"SCHEMA public TO {role}; GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}")


def _drop_empty_file(path) -> bool:
    """Remove the empty SQLite file at ``path`` that an open on a full disk made (it holds nothing:
    SQLite made it, then could not write its first page); whether it did. QA (qa96): ``tuner study
    create`` on a full disk left a 0-byte ``NAME.db``, which every later command took for a storage."""
    try:
        if path.is_file() and path.stat().st_size == 0:
            path.unlink()
            return True
    except OSError:
        pass
    return False


def _build(url: str, patient: bool):
    import warnings

    from optuna.exceptions import ExperimentalWarning
    from optuna.storages import RDBStorage

    import sqlalchemy as sa

    from .patience import PatientRDBStorage, busy_timeout_s
    from .requeue import RetryStaleTrial

    engine_kwargs: dict = {}
    if url.startswith("sqlite"):
        # A patient storage's busy timeout is capped by the patience left (busy_timeout_s): here for
        # the connections Optuna's constructor opens, by _cap_busy_timeout for every later one.
        timeout = busy_timeout_s(SQLITE_TIMEOUT_S) if patient else SQLITE_TIMEOUT_S
        engine_kwargs["connect_args"] = {"timeout": timeout}
        # A connection is closed when its session ends, not kept in a pool nothing closes: Python
        # 3.13's sqlite3 warns (ResourceWarning) of every connection collected unclosed, and an
        # Optuna storage's engine is never disposed. Opening an SQLite file costs well under 1 ms.
        engine_kwargs["poolclass"] = sa.pool.NullPool
    else:
        engine_kwargs["pool_pre_ping"] = True
        engine_kwargs["connect_args"] = _connect_args(url)
    cls = PatientRDBStorage if patient else RDBStorage
    kwargs = dict(engine_kwargs=engine_kwargs, heartbeat_interval=HEARTBEAT_INTERVAL_S,
                  grace_period=HEARTBEAT_GRACE_S, heartbeat_stale_trial_callback=RetryStaleTrial(max_retry=MAX_RETRY))
    # Heartbeats and the retry callback are "experimental" in Optuna 5; users need not hear it.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        storage = cls(driver_url(url), skip_compatibility_check=True, **kwargs)
        if not _schema_is_current(storage):
            storage.engine.dispose()
            # Optuna's own check: it raises its RuntimeError, which names the fix (optuna storage upgrade)
            storage = cls(driver_url(url), **kwargs)
    if is_postgres(url):
        # Every session of the tuner commits synchronously, whatever the server's default: with
        # synchronous_commit = off (a common tuning; .ci/postgres.sh runs so) PostgreSQL acknowledges
        # a commit before writing it, and an immediate restart or a crash of the server forgot them
        # (QA: a tell acknowledged, then the trial RUNNING again and its setting measured twice; a
        # trial gone under its worker; a queued trial started twice). The setting is a session's
        # own (USERSET; https://www.postgresql.org/docs/current/wal-async-commit.html); fsync is
        # the server's (tuner doctor warns of it). And every session's clock reads UTC, and its
        # wait for a lock ends: see pg_sessions.session_settings.
        sa.event.listen(storage.engine, "connect", session_settings)
        sa.event.listen(storage.engine, "begin", transaction_settings)  # behind PgBouncer (QA, qa176)
        storage.engine.dispose()  # the connections Optuna's constructor opened before the hook
        if not patient:  # a patient call's attempts are bounded by its ReplyWatch, below
            _bound_statements(storage.engine, url)
    if patient:
        storage.watch(redact(url) or "", sqlite_path(url), lambda exc: describe_error(exc, url))
        if is_postgres(url):  # a session whose server froze waits with no end: see reply_watch
            storage.reply_watch = ReplyWatch(storage.engine, reply_limit_s)
        if url.startswith("sqlite"):
            # each connection (one per session: no pool) waits for a lock no longer than the patience left
            sa.event.listen(storage.engine, "do_connect", _cap_busy_timeout)
    return storage


#: The installed Optuna's newest schema revision (its alembic head): read once per process.
_schema_head: str | None = None


def _schema_is_current(storage) -> bool:
    """Whether the storage's tables are in the installed Optuna's schema. Optuna's own check on
    every open (``RDBStorage(skip_compatibility_check=False)``) reads the head revision by parsing
    every migration script of its alembic folder: about 25 ms of CPU, most of what an open costs,
    and a study run opens its storage several times. The head cannot change within a process, so it
    is read once here; the storage's own revision is still read on every open (one query)."""
    global _schema_head
    if _schema_head is None:
        _schema_head = storage.get_head_version()
    return storage.get_current_version() == _schema_head


def _cap_busy_timeout(dialect, conn_rec, cargs, cparams) -> None:
    """SQLAlchemy's ``do_connect`` hook of a patient SQLite storage: the connection's busy timeout
    no longer than the patience left (:func:`tuner.engine.patience.busy_timeout_s`)."""
    from .patience import busy_timeout_s

    cparams["timeout"] = busy_timeout_s(SQLITE_TIMEOUT_S)


def _build_with_retry(url: str, patient: bool):
    """Build the storage, retrying with backoff when another process won a table-creation race."""
    from sqlalchemy.exc import DBAPIError

    from .patience import is_transient

    for attempt in range(_CREATE_ATTEMPTS):
        started = time.monotonic()
        try:
            return _build(url, patient)
        except DBAPIError as exc:
            msg = str(exc).lower()
            racing = any(s in msg for s in ("already exists", "duplicate", "unique", "locked"))
            # A lock that outlasted the busy timeout is held, not a race (creating tables locks for
            # milliseconds): a read command waited five busy timeouts for it (QA: 5 x 60 s in silence)
            racing = racing and not ("locked" in msg and time.monotonic() - started >= SQLITE_TIMEOUT_S)
            # a patient open retries a lock itself, within the patience (its retries here ran past it)
            if not racing or attempt == _CREATE_ATTEMPTS - 1 or (patient and is_transient(exc)):
                raise
            time.sleep(random.uniform(0.1, 0.5) * (attempt + 1))
    raise AssertionError("unreachable")


@contextmanager
def _schema_lock(url: str):
    """Hold a PostgreSQL advisory lock (per database) while the block runs.

    A second worker waits (polling ``pg_try_advisory_xact_lock``, up to :data:`SCHEMA_LOCK_TIMEOUT_S`)
    until the first has created the tables. The lock is a transaction's, held by a transaction left
    open on its own connection until the block ends (then rolled back, which lets it go), so it
    holds behind PgBouncer in transaction mode (``pool_mode = transaction``, common on shared
    clusters) as it does on a plain server: a session's lock (``pg_try_advisory_lock``) stayed on
    the server connection PgBouncer gave back to its pool at the commit, where its unlock, sent
    over whichever connection the pool gave next, did not find it. The stranded lock then failed
    every later command of every worker (QA, qa176: "another worker has held the table-creation
    lock for over 120 s"), and a client given that server connection took the lock again as its
    own (a session's advisory lock is re-entrant): two workers building at once. An open
    transaction keeps its server connection in every pool mode. The lock dies with its connection,
    so a worker killed while holding it blocks nobody.
    """
    import sqlalchemy as sa

    engine = sa.create_engine(driver_url(url), poolclass=sa.pool.NullPool, connect_args=_connect_args(url))
    _bound_statements(engine, url)
    try:
        with engine.connect() as conn:
            dropped = search_path_dropped(conn, url)
            if dropped is not None:  # before any table is made in the wrong schema
                raise ConfigError("storage", redact(url) or "", dropped)
            deadline = time.monotonic() + SCHEMA_LOCK_TIMEOUT_S
            while True:
                # the transaction sits idle while the tables are made on other connections: a role's
                # idle_in_transaction_session_timeout (ALTER ROLE ... SET) must not end it meanwhile
                conn.execute(sa.text("SET LOCAL idle_in_transaction_session_timeout = 0"))
                if conn.execute(sa.text("SELECT pg_try_advisory_xact_lock(:k)"), {"k": _SCHEMA_LOCK_KEY}).scalar():
                    break
                conn.rollback()
                if time.monotonic() > deadline:
                    raise ConfigError("storage", redact(url) or "", f"another worker has held the table-creation "
                                      f"lock for over {SCHEMA_LOCK_TIMEOUT_S:.0f} s; is a tuner process hung?")
                time.sleep(random.uniform(0.05, 0.2))
            try:
                yield
            finally:
                try:
                    conn.rollback()  # ends the transaction, and with it the lock
                except sa.exc.DBAPIError:
                    pass  # the connection is gone (terminated, server restarted): its lock went with it
    finally:
        engine.dispose()
