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
            try:
                fd = os.dup(conn.fileno())
            except Exception:  # noqa: BLE001 - closed meanwhile (the driver's InterfaceError), or no fileno
                continue
            try:
                sock = socket.socket(fileno=fd)
            except OSError:  # not a socket: socket() leaves the duplicate open
                os.close(fd)
                continue
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
