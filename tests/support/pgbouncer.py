"""A real PgBouncer in front of the test PostgreSQL server, for the tests of pooled deployments.

    with pgbouncer(server_url, "transaction", tmp_path) as url:   # url: the same database, via PgBouncer

The binary is Debian's ``pgbouncer`` (``apt-get install pgbouncer``); a test using this fails when it is
missing (:func:`require_pgbouncer`). The bouncer listens on 127.0.0.1 on a free
port, in its own process group (started with ``setsid``), and is stopped by that group when the
block ends. It authenticates the URL's role with the URL's password (SCRAM, as the server does),
written to a file of mode 600 under ``tmp_path``, never on a command line. As root it drops to the
``postgres`` user after reading its files (``-u``: PgBouncer refuses to run as root).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest


def require_pgbouncer() -> str:
    """The pgbouncer binary's path; fails the test when it is not installed, as the report's
    browser check does without chromium: ``.ci/setup-system`` installs it, and a skip would hide
    the pooled-deployment tests from CI."""
    found = shutil.which("pgbouncer") or next(
        (p for p in ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer") if os.access(p, os.X_OK)), None)
    if found is None:
        pytest.fail("install pgbouncer (Debian package `pgbouncer`; bash .ci/setup-system does) to run the "
                    "tests of PostgreSQL behind a connection pooler")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


@contextmanager
def pgbouncer(server_url: str, pool_mode: str, tmp_path: Path, pool_size: int = 10, ignore: str = ""):
    """A PgBouncer in ``pool_mode`` in front of ``server_url``'s server while the block runs; yields
    the URL of ``server_url``'s database through it (same role and password). ``ignore``: its
    ``ignore_startup_parameters`` (e.g. ``options``: dropped in silence instead of refused)."""
    from sqlalchemy.engine import URL, make_url

    binary = require_pgbouncer()
    parts = make_url(server_url)
    raw = urlsplit(server_url)
    users = tmp_path / "pgbouncer-users.txt"
    users.touch(mode=0o600)
    users.write_text(f'"{parts.username}" "{parts.password}"\n')
    argv_user = ["-u", "postgres"] if os.geteuid() == 0 else []
    for _ in range(5):  # the free port may be taken before the bouncer binds it: try another
        port = _free_port()
        ini = tmp_path / "pgbouncer.ini"
        ini.write_text(f"""[databases]
* = host={raw.hostname} port={raw.port or 5432}
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = scram-sha-256
auth_file = {users}
pool_mode = {pool_mode}
default_pool_size = {pool_size}
max_client_conn = 200
ignore_startup_parameters = {ignore}
""")
        log = open(tmp_path / "pgbouncer.log", "ab")
        proc = subprocess.Popen([binary, *argv_user, str(ini)], stdout=log, stderr=log, start_new_session=True)
        log.close()
        deadline = time.monotonic() + 20
        while proc.poll() is None and not _answers(port) and time.monotonic() < deadline:
            time.sleep(0.05)
        if proc.poll() is None and _answers(port):
            break
        _stop(proc)
    else:
        pytest.fail(f"pgbouncer did not start: {(tmp_path / 'pgbouncer.log').read_text()[-500:]}", pytrace=False)
    try:
        yield URL.create("postgresql", username=parts.username, password=parts.password, host="127.0.0.1",
                         port=port, database=parts.database).render_as_string(hide_password=False)
    finally:
        _stop(proc)


def _stop(proc: subprocess.Popen) -> None:
    """Stop the bouncer's process group (its own: started with setsid), and reap it."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=20)
