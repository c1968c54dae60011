"""Fixtures of the engine tests: a real PostgreSQL server and a fresh database per test."""

from support.pg import pg_server, pg_url  # noqa: F401 - fixtures
