"""A study's database set ``ALLOW_CONNECTIONS false`` (``ALTER DATABASE ... WITH ALLOW_CONNECTIONS
false``: an administrator closing it, as before a ``DROP DATABASE``): every connection is refused
with ``database "NAME" is not currently accepting connections`` (src/backend/utils/init/postinit.c,
CheckMyDatabase, beside the invalid database's refusal).

QA (qa167): ``tuner study run --study NAME`` on it waited out its whole patience (``does not answer``,
then ``did not answer``, exit 75), and a read command said ``run it again once the storage answers``:
the server answered, and no wait opens the database. Now it is refused at once, exit 2, naming what
opens it, as a revoked CONNECT is.

The session's own server (support.pg.PgCluster), its superuser closing the database.
"""

import sqlalchemy as sa
from support.pg_refusals import PATIENCE_S, assert_refused_at_once, run_and_status, study_database, superuser


def test_a_database_closed_to_connections_is_refused_at_once_with_its_fix(pg_cluster, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", PATIENCE_S)
    url = pg_cluster.database()
    name = study_database(url, "closed")
    su = superuser(pg_cluster)
    try:
        with su.connect() as conn:
            conn.execute(sa.text(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false'))
        results = run_and_status("closed", url)
    finally:
        with su.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
        su.dispose()
    assert_refused_at_once(results, "is not currently accepting connections", "ALLOW_CONNECTIONS true")
