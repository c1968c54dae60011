"""Fixtures of the engine tests: a real PostgreSQL server and a fresh database per test, and a
server of the session's own that tests stop and start (outages)."""

from support.pg import _pg_cluster_session, pg_cluster, pg_server, pg_url  # noqa: F401 - fixtures
