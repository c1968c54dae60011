"""Fixtures of the engine tests: a real PostgreSQL server and a fresh database per test, and a
server of the session's own that tests stop and start (outages); ``url``: a test run on a real
SQLite file and on a real PostgreSQL database, once each."""

import pytest

from support.pg import _pg_cluster_session, pg_cluster, pg_server, pg_url  # noqa: F401 - fixtures


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    """A storage URL: a new SQLite file, then a new PostgreSQL database (one run of the test each)."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'study.db'}"
    return request.getfixturevalue("pg_url")
