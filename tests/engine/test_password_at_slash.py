"""A storage URL whose password, written as it is, holds "@/" (``u:Ab@/#x@host:port/db``). QA
(qa190): SQLAlchemy ends the password at that "@" and reads no host, the database "#x@host:port/db":
every command connected to the local socket ("connection to server on socket
"/var/run/postgresql/.s.PGSQL.5432" failed") and showed the password's end in its line
(``postgresql://u:***@/%23x%40127.0.0.1...``). The session's own server (support.pg.PgCluster)
makes the role; a real connection."""

import uuid
from urllib.parse import quote, urlsplit

from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.engine.doctor import FAIL, check_storage
from tuner.engine.urls import connect_url, redact

PASSWORD = "Ab@/#x9"


def test_a_password_holding_at_slash_as_written_connects_and_stays_hidden(tmp_path, pg_cluster):
    role = f"atslash_{uuid.uuid4().hex[:8]}"
    parts = urlsplit(pg_cluster.database(user=role, password=PASSWORD))
    raw = f"postgresql://{role}:{PASSWORD}@127.0.0.1:{parts.port}{parts.path}"
    read = connect_url(raw)
    assert (read.host, read.port, read.password) == ("127.0.0.1", parts.port, PASSWORD), read
    shown = redact(raw)
    assert shown == f"postgresql://{role}:***@127.0.0.1:{parts.port}{parts.path}", shown  # no "#x9"

    c = check_storage(load_study(demo_study(tmp_path, storage=raw)))
    assert c.status != FAIL, c  # before the fix: the local socket, "No such file or directory"
    assert "x9" not in c.message and quote("#x9") not in c.message, c


def test_a_socket_url_without_a_host_reads_as_before():
    assert connect_url("postgresql://u:p@/db?host=/run/pg").database == "db"
    assert connect_url("postgresql:///my@db").database == "my@db"  # no password: no credentials to end
