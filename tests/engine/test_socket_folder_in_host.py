"""A storage URL in libpq's own unix-socket spelling, the socket folder percent-encoded where the
host goes (``postgresql://USER@%2Frun%2Fpostgresql:5432/DB``, the PostgreSQL manual's example,
which psql connects with). QA (qa190): SQLAlchemy does not decode the host, so the driver looked
up "%2Frun%2Fpostgresql" as a host name: `tuner doctor` failed "could not translate host name",
and every command with it. The session's own server (support.pg.PgCluster) listens on its socket
folder; a real connection over it."""

from urllib.parse import quote, urlsplit

from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.engine.doctor import FAIL, check_storage
from tuner.engine.storage import open_storage
from tuner.engine.urls import connect_url, redact


def test_a_socket_folder_written_as_the_host_connects(tmp_path, pg_cluster):
    url = pg_cluster.database()
    parts = urlsplit(url)
    folder = str(pg_cluster.dir / "sock")
    socket_url = f"postgresql://{parts.username}:{parts.password}@{quote(folder, safe='')}:{parts.port}{parts.path}"
    read = connect_url(socket_url)
    assert read.host is None and read.query["host"] == folder and read.port == parts.port, read
    assert parts.password not in redact(socket_url)

    c = check_storage(load_study(demo_study(tmp_path, storage=socket_url)))
    assert c.status != FAIL, c  # before the fix: 'could not translate host name "%2Ftmp..." to address'
    storage = open_storage(socket_url)
    try:
        assert storage.get_all_studies() == []
    finally:
        storage.engine.dispose()


def test_a_host_of_the_query_or_a_name_stays_as_written():
    assert connect_url("postgresql://u:p@db.example:5432/x").host == "db.example"
    kept = connect_url("postgresql://u:p@%2Fa:5432/x?host=/b")  # the query's host is the URL's own choice
    assert kept.query["host"] == "/b"
    assert connect_url("sqlite:///a%2Fb.db").host is None
