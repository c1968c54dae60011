"""A real PostgreSQL server for the distributed-study tests, and a fresh database per test.

The server: ``$TUNER_TEST_PG_URL`` when set (``.ci/run`` starts one with ``.ci/postgres.sh`` and
exports it); a test then FAILS, never skips, when that server does not answer. When the variable is
not set at all (a developer machine), the session starts its own throwaway server with
``.ci/postgres.sh`` (which installs Debian's postgresql as root if needed) and stops it at the end;
if that is impossible the tests fail with the script's message.

Each test gets its own database (``CREATE DATABASE``; the role needs CREATEDB, which
``.ci/postgres.sh`` grants), dropped afterwards: a fresh storage, as a first worker sees it.

    pg_url   # the fixture, from tests/engine/conftest.py: use ``pg_url`` in a test

Outage tests need a server they may stop: ``pg_cluster`` (:class:`PgCluster`) is one this session
starts for itself with the same script, whatever ``$TUNER_TEST_PG_URL`` says, and stops at the end.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]
ENV = "TUNER_TEST_PG_URL"
SCRIPT = ROOT / ".ci" / "postgres.sh"


def _engine(url: str):
    import sqlalchemy as sa

    from tuner.engine.storage import driver_url

    return sa.create_engine(driver_url(url), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool,
                            connect_args={"connect_timeout": 10})


def _check_reachable(url: str, where: str) -> None:
    import sqlalchemy as sa

    from tuner.engine.storage import redact

    engine = _engine(url)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except Exception as exc:  # noqa: BLE001 - any failure means: no usable server
        password = urlsplit(url).password or "\0"
        msg = str(exc).splitlines()[0].replace(password, "***")
        pytest.fail(f"PostgreSQL from {where} ({redact(url)}) is unreachable: {type(exc).__name__}: {msg}",
                    pytrace=False)
    finally:
        engine.dispose()


@pytest.fixture(scope="session")
def pg_server(tmp_path_factory):
    """The URL of a running PostgreSQL server (see the module docstring)."""
    url = os.environ.get(ENV)
    if url is not None:
        _check_reachable(url, f"${ENV}")
        yield url
        return
    with throwaway_server(tmp_path_factory.mktemp("postgres") / "pg.url", f"{ENV} is not set and") as url_file:
        url = url_file.read_text().strip()
        _check_reachable(url, str(SCRIPT.relative_to(ROOT)))
        yield url


@contextmanager
def throwaway_server(url_file: Path, why: str = ""):
    """A PostgreSQL server of ``.ci/postgres.sh`` while the block runs (its URL in ``url_file``),
    stopped and deleted afterwards. The test fails (``why`` first) when it cannot start; outside
    pytest (benchmarks) that is a ``RuntimeError``."""
    started = subprocess.run(["bash", str(SCRIPT), str(url_file)], capture_output=True, text=True, timeout=600)
    if started.returncode != 0:
        message = (f"{why} {SCRIPT.relative_to(ROOT)} could not start PostgreSQL (exit {started.returncode}): "
                   f"{started.stderr.strip()[-500:]}").strip()
        if os.environ.get("PYTEST_CURRENT_TEST") is None:
            raise RuntimeError(message)
        pytest.fail(message, pytrace=False)
    try:
        yield url_file
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(url_file)], capture_output=True, timeout=120)


def database_url(server_url: str, name: str) -> str:
    parts = urlsplit(server_url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


def admin_sql(server_url: str, statement: str, params: dict | None = None) -> None:
    """Run one statement on the test server outside a transaction (``CREATE DATABASE`` needs that),
    on a connection of its own, closed after it."""
    import sqlalchemy as sa

    engine = _engine(server_url)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text(statement), params or {})
    finally:
        engine.dispose()


def new_database(server_url: str, prefix: str = "tuner_test_", template: str | None = None) -> str:
    """The name of a new database on the test server, empty or a copy of database ``template`` (which
    no session may hold open); the caller drops it (:func:`drop_database`)."""
    name = prefix + uuid.uuid4().hex[:12]
    admin_sql(server_url, f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
    return name


def drop_database(server_url: str, name: str) -> None:
    # FORCE (PostgreSQL 13+): a worker a test killed may still hold a connection.
    admin_sql(server_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def pg_url(pg_server):
    """A URL to a new, empty database on the test server; dropped after the test."""
    name = new_database(pg_server)
    yield database_url(pg_server, name)
    drop_database(pg_server, name)


def database_text(url: str) -> str:
    """Every row of every table in the database, as JSON text (to search for a password)."""
    import sqlalchemy as sa

    engine = _engine(url)
    try:
        with engine.connect() as conn:
            tables = conn.execute(sa.text(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'")).scalars().all()
            chunks = [f"-- {t}\n" + "\n".join(conn.execute(sa.text(f'SELECT row_to_json(x)::text FROM "{t}" x'))
                                              .scalars().all()) for t in tables]
    finally:
        engine.dispose()
    assert "studies" in tables and "trial_user_attributes" in tables, tables
    return "\n".join(chunks)


class PgCluster:
    """A PostgreSQL server of this test session alone, which tests stop and start again (outages).

    Started by ``.ci/postgres.sh`` like the shared one, so it is a real server with the same
    settings; :meth:`stop` and :meth:`start` run its ``pg_ctl`` (as the ``postgres`` user when the
    tests run as root, as the script does). The superuser reaches it over its private socket, to
    create roles with any password (:meth:`database`).
    """

    def __init__(self, url_file: Path):
        self.url_file = url_file
        self.url = url_file.read_text().strip()
        self.dir = Path(Path(f"{url_file}.pgdir").read_text().strip())
        self.port = int((self.dir / "port").read_text().strip())
        bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True).stdout.strip()
        if not (Path(bindir) / "pg_ctl").exists():
            bindir = sorted(Path("/usr/lib/postgresql").glob("*/bin"))[-1]
        self.bindir = Path(bindir)

    def _owner(self, argv: list[str]) -> list[str]:
        return ["runuser", "-u", "postgres", "--", *argv] if os.geteuid() == 0 else argv

    def _ctl(self, *args: str) -> None:
        argv = self._owner([str(self.bindir / "pg_ctl"), "-D", str(self.dir / "data"), *args])
        done = subprocess.run(argv, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, f"pg_ctl {args[-1]} failed: {done.stderr.strip()[-300:]}"

    def stop(self) -> None:
        """Shut the server down (``pg_ctl stop -m fast``: open connections are cut)."""
        self._ctl("-m", "fast", "-w", "-t", "60", "stop")

    def start(self) -> None:
        """Start it again on the same port, with the options .ci/postgres.sh starts it with."""
        opts = (f"-c listen_addresses=127.0.0.1 -c port={self.port} -c unix_socket_directories={self.dir}/sock "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200")
        self._ctl("-l", str(self.dir / "server.log"), "-w", "-t", "60", "-o", opts, "start")

    def running(self) -> bool:
        argv = [str(self.bindir / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(self.port), "-t", "5"]
        return subprocess.run(argv, capture_output=True, timeout=30).returncode == 0

    def database(self, user: str | None = None, password: str | None = None) -> str:
        """A new empty database (owned by a new role ``user`` with ``password``, when given);
        returns its URL with the role's password as SQLAlchemy writes it (percent-encoded)."""
        import sqlalchemy as sa
        from sqlalchemy.engine import URL

        name = "tuner_test_" + uuid.uuid4().hex[:12]
        su = sa.create_engine(f"postgresql+psycopg2://postgres@/postgres?host={self.dir}/sock&port={self.port}",
                              isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
        try:
            with su.connect() as conn:
                if user is not None:
                    conn.execute(sa.text(f'CREATE ROLE "{user}" LOGIN PASSWORD :pw'), {"pw": password})
                owner = user or urlsplit(self.url).username
                conn.execute(sa.text(f'CREATE DATABASE "{name}" OWNER "{owner}"'))
        finally:
            su.dispose()
        base = urlsplit(self.url)
        return URL.create("postgresql", username=user or base.username, password=password if user else base.password,
                          host="127.0.0.1", port=self.port, database=name).render_as_string(hide_password=False)


@pytest.fixture(scope="session")
def _pg_cluster_session(tmp_path_factory):
    with throwaway_server(tmp_path_factory.mktemp("pg-own") / "pg.url", "for the outage tests,") as url_file:
        yield PgCluster(url_file)


@pytest.fixture
def pg_cluster(_pg_cluster_session):
    """This session's own PostgreSQL server (:class:`PgCluster`), running when the test starts and
    started again after it, whatever the test did to it."""
    cluster = _pg_cluster_session
    if not cluster.running():
        cluster.start()
    yield cluster
    if not cluster.running():
        cluster.start()
