"""Cut the PostgreSQL sessions of a call whose reply never comes: the one wait libpq has no end for.

A session opened before its server froze (the server's processes stopped with SIGSTOP, a paused
VM, a server swapped to death, a network that drops packets after the request was sent) waits for
the reply of its statement for ever: libpq has no timeout for a query's answer, ``connect_timeout``
covers only a new connection, ``lock_timeout`` and ``statement_timeout`` are kept by the frozen
server itself, and a stopped process's kernel still answers TCP keepalives. A running worker sat
in silence past ``TUNER_STORAGE_PATIENCE_S``, its trial RUNNING, with no line (QA: SIGSTOP on
every process of the cluster, 90 s and counting at a patience of 2 s).

:class:`ReplyWatch` keeps the DBAPI connections an engine opens, and :meth:`ReplyWatch.armed`
bounds one attempt of a storage call: when it has not returned after the limit, every open session
of the engine is shut down at the socket (``shutdown(2)`` on a duplicate of libpq's descriptor;
libpq still owns and closes the descriptor). The driver's blocked wait then ends with its own
error ("server closed the connection unexpectedly"), which the retry loop of
:mod:`tuner.engine.patience` reports as :class:`NoReply` and waits out as any outage: a new
session (``connect_timeout``), backoff, the patience, then one line and exit 75 with the
measurement in the journal.

Contracts: every session of the engine is cut, not only the stuck call's (SQLAlchemy's
``pool_pre_ping`` may be the statement that waits, before the pool says which connection a call
got): a call of another thread then fails once and is retried like any outage. The limit is the
caller's, read when an attempt starts; a statement that legitimately waits longer than it (a lock,
which ``lock_timeout`` ends first) is cut and retried. Nothing here runs SQL or imports a driver.
"""

from __future__ import annotations

import os
import socket
import threading
from contextlib import contextmanager
from typing import Callable, Iterator


class NoReply(ConnectionError):
    """A storage call's sessions were cut because no reply came within the limit (an outage: the
    retry loop waits it out)."""


class ReplyWatch:
    """The open DBAPI connections of one SQLAlchemy engine, and a bound on how long a call waits.

    ``limit_s()`` gives the bound (seconds) when an attempt starts. The engine's ``connect`` event
    adds each new DBAPI connection; closed ones are dropped when the next one opens."""

    def __init__(self, engine, limit_s: Callable[[], float]):
        import sqlalchemy as sa

        self.limit_s = limit_s
        self._open: dict[int, object] = {}
        self._lock = threading.Lock()
        sa.event.listen(engine, "connect", self._opened)

    def _opened(self, dbapi_connection, connection_record) -> None:
        with self._lock:
            self._open = {k: c for k, c in self._open.items() if not _closed(c)}
            self._open[id(dbapi_connection)] = dbapi_connection

    @contextmanager
    def armed(self) -> Iterator[threading.Event]:
        """Run the block with a timer: past ``limit_s()`` every open session is cut and the event
        yielded is set (its ``limit_s`` says the bound; the block's error is then the cut's). The timer is a daemon thread,
        cancelled when the block ends."""
        fired = threading.Event()
        fired.limit_s = limit = self.limit_s()  # type: ignore[attr-defined] - for the caller's message
        timer = threading.Timer(limit, self._cut, args=(fired,))
        timer.daemon = True
        timer.start()
        try:
            yield fired
        finally:
            timer.cancel()

    def _cut(self, fired: threading.Event) -> None:
        fired.set()
        with self._lock:
            sessions = [c for c in self._open.values() if not _closed(c)]
        for conn in sessions:
            _shut(conn)


#: Why a statement had its session cut, the words every bound here gives.
WHY = ("the server frozen, a pooler with no server behind it (PgBouncer), a paused VM or a network "
       "dropping packets")


def no_reply(limit_s: float, statement: str = "", parameters=None, cause: BaseException | None = None):
    """The error of a statement whose session was cut after ``limit_s``: SQLAlchemy's
    ``OperationalError`` (a storage error to every caller: :func:`tuner.engine.patience.database_error`)
    around a :class:`NoReply` (its ``Type: words`` in the one line), its connection invalidated (an
    outage: :func:`tuner.engine.patience.is_transient`)."""
    import sqlalchemy as sa

    inner = NoReply(f"no reply within {limit_s:.0f} s ({WHY}); its session was cut")
    inner.__cause__ = cause
    error = sa.exc.OperationalError(statement, parameters, inner, connection_invalidated=True)
    error.__cause__ = inner
    return error


@contextmanager
def bounded(dbapi_connection, limit_s: float) -> Iterator[threading.Event]:
    """Run the block (statements on ``dbapi_connection`` alone) with a timer: past ``limit_s`` that
    session is cut at the socket and the event yielded is set; the block's error is then the cut's."""
    timer, fired = _session_timer(dbapi_connection, limit_s)
    try:
        yield fired
    finally:
        timer.cancel()


def _session_timer(dbapi_connection, limit_s: float) -> tuple[threading.Timer, threading.Event]:
    """A started daemon timer that, past ``limit_s``, sets the event returned with it and cuts
    ``dbapi_connection``'s session at the socket (:func:`_shut`); cancel the timer to stand it down."""
    fired = threading.Event()
    timer = threading.Timer(limit_s, lambda: (fired.set(), _shut(dbapi_connection)))
    timer.daemon = True
    timer.start()
    return timer, fired


class StatementBound:
    """A bound on every statement SQLAlchemy runs on one engine, for the calls no retry loop arms
    (:class:`ReplyWatch` is a patient call's): a read command (status, pareto, export, report,
    compare, list), ``create``, and the probes that open any storage. Past ``limit_s()`` (read when
    the statement starts) the statement's own session is cut at the socket, and its error is
    :func:`no_reply`'s.

    Why: behind PgBouncer whose server is gone, the pooler answers the login itself and queues
    the statement until its ``query_wait_timeout`` (120 s by default); a session whose server froze
    after the login waits with no end. ``connect_timeout`` covers neither, nor does the
    ``statement_timeout`` the server keeps: ``tuner study status`` stood 2 min without a line, then
    said "server closed the connection unexpectedly" (QA, qa183). The pool's pre-ping is bounded
    the same way; a cut ping is a lost connection to SQLAlchemy, which opens a new one."""

    _KEY = "tuner_statement_bound"

    def __init__(self, engine, limit_s: Callable[[], float]):
        import sqlalchemy as sa

        self.limit_s = limit_s
        self._connecting = threading.local()
        # A new session's first statements run inside the pool's connect, with no cursor events:
        # SQLAlchemy's dialect asks for hstore's OIDs (psycopg2) and the tuner's connect hooks set
        # the session up. Behind PgBouncer they wait in its queue as any statement (QA, qa183: the
        # first read hung in SQLAlchemy's psycopg2 on_connect). The bound runs from the driver's
        # connect (do_connect) to the last connect hook (this one's, added after the others).
        sa.event.listen(engine, "do_connect", self._do_connect)
        sa.event.listen(engine, "connect", self._connected)
        sa.event.listen(engine, "before_cursor_execute", self._before)
        sa.event.listen(engine, "after_cursor_execute", self._after)
        sa.event.listen(engine, "handle_error", self._error)
        # The pool's pre-ping of a connection it gives again (pool_pre_ping) runs no cursor events:
        # on a server frozen between two calls of a read it waited with no end (QA, qa183: status's
        # second call, SIGSTOP on every process of the cluster). Cut, the ping is a disconnect to
        # SQLAlchemy, which connects anew: connect_timeout ends that. The dialect is this engine's own.
        ping = engine.dialect.do_ping

        def bounded_ping(dbapi_connection):
            with bounded(dbapi_connection, self.limit_s()):
                return ping(dbapi_connection)

        engine.dialect.do_ping = bounded_ping

    def _do_connect(self, dialect, connection_record, cargs, cparams):
        dbapi_connection = dialect.connect(*cargs, **cparams)  # connect_timeout bounds this
        limit = self.limit_s()
        timer, fired = _session_timer(dbapi_connection, limit)
        self._connecting.entry = (timer, fired, limit)
        return dbapi_connection

    def _connected(self, dbapi_connection, connection_record) -> None:
        entry = getattr(self._connecting, "entry", None)
        if entry is not None and not entry[1].is_set():
            entry[0].cancel()
            self._connecting.entry = None

    def _before(self, conn, cursor, statement, parameters, context, executemany) -> None:
        limit = self.limit_s()
        timer, fired = _session_timer(conn.connection.dbapi_connection, limit)
        conn.info[self._KEY] = (timer, fired, limit)

    def _after(self, conn, cursor, statement, parameters, context, executemany) -> None:
        entry = conn.info.pop(self._KEY, None)
        if entry is not None:
            entry[0].cancel()

    def _error(self, context) -> None:
        conn = context.connection
        entry = None if conn is None else conn.info.pop(self._KEY, None)
        if entry is None:  # an error of the pool's connect (no Connection yet): this thread's connect
            entry, self._connecting.entry = getattr(self._connecting, "entry", None), None
        if entry is None:
            return
        timer, fired, limit = entry
        timer.cancel()
        if fired.is_set():  # the error is the cut's: say why it was cut
            raise no_reply(limit, context.statement or "", context.parameters,
                           cause=context.original_exception)


def _shut(conn) -> None:
    """Shut the socket of the open DBAPI connection ``conn`` down (``shutdown(2)`` on a duplicate
    of libpq's descriptor; libpq still owns and closes its own)."""
    if _closed(conn):
        return
    try:
        fd = os.dup(conn.fileno())
    except Exception:  # noqa: BLE001 - closed meanwhile (the driver's InterfaceError), or no fileno
        return
    try:
        sock = socket.socket(fileno=fd)
    except OSError:  # not a socket: socket() leaves the duplicate open
        os.close(fd)
        return
    # shutdown() acts on the socket both descriptors share; closing the duplicate (the with)
    # leaves libpq's own descriptor to libpq
    with sock:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # no longer connected
            pass


def _closed(conn) -> bool:
    closed = getattr(conn, "closed", True)  # psycopg2: 0 while open; psycopg 3: False
    return bool(closed)
