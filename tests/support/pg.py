"""A real PostgreSQL server for the distributed-study tests, and a fresh database per test.

The server: ``$TUNER_TEST_PG_URL`` when set (``.ci/run`` starts one with ``.ci/postgres.sh`` and
exports it); a test then FAILS, never skips, when that server does not answer. When the variable is
not set at all (a developer machine), the session starts its own throwaway server with
``.ci/postgres.sh`` (which installs Debian's postgresql as root if needed) and stops it at the end;
if that is impossible the tests fail with the script's message.

Each test gets its own database (``CREATE DATABASE``; the role needs CREATEDB, which
``.ci/postgres.sh`` grants), dropped afterwards: a fresh storage, as a first worker sees it.

    pg_url   # the fixture, from tests/engine/conftest.py: use ``pg_url`` in a test
"""

from __future__ import annotations

import os
import subprocess
import uuid
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
    url_file = tmp_path_factory.mktemp("postgres") / "pg.url"
    started = subprocess.run(["bash", str(SCRIPT), str(url_file)], capture_output=True, text=True, timeout=600)
    if started.returncode != 0:
        pytest.fail(f"{ENV} is not set and {SCRIPT.relative_to(ROOT)} could not start PostgreSQL "
                    f"(exit {started.returncode}): {started.stderr.strip()[-500:]}", pytrace=False)
    try:
        url = url_file.read_text().strip()
        _check_reachable(url, str(SCRIPT.relative_to(ROOT)))
        yield url
    finally:
        subprocess.run(["bash", str(SCRIPT), "stop", str(url_file)], capture_output=True, timeout=120)


def database_url(server_url: str, name: str) -> str:
    parts = urlsplit(server_url)
    return urlunsplit((parts.scheme, parts.netloc, "/" + name, parts.query, parts.fragment))


@pytest.fixture
def pg_url(pg_server):
    """A URL to a new, empty database on the test server; dropped after the test."""
    import sqlalchemy as sa

    name = "tuner_test_" + uuid.uuid4().hex[:12]
    engine = _engine(pg_server)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
        yield database_url(pg_server, name)
        with engine.connect() as conn:
            # FORCE (PostgreSQL 13+): a worker a test killed may still hold a connection.
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        engine.dispose()
