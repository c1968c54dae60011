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

import optuna
import sqlalchemy as sa
from click.testing import CliRunner

from tuner.cli import cli
from tuner.engine.storage import open_storage


def test_a_database_closed_to_connections_is_refused_at_once_with_its_fix(pg_cluster, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "30")  # before the fix: 30 s of waiting, then exit 75
    url = pg_cluster.database()
    storage = open_storage(url)
    optuna.create_study(study_name="closed", storage=storage, directions=["maximize"])
    storage.engine.dispose()
    name = sa.engine.make_url(url).database
    socket = f"host={pg_cluster.dir}/sock&port={pg_cluster.port}"
    su = sa.create_engine(f"postgresql+psycopg2://postgres@/postgres?{socket}", isolation_level="AUTOCOMMIT",
                          poolclass=sa.pool.NullPool)
    try:
        with su.connect() as conn:
            conn.execute(sa.text(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false'))
        ran = CliRunner().invoke(cli, ["study", "run", "--study", "closed", "--storage", url])
        shown = CliRunner().invoke(cli, ["study", "status", "--study", "closed", "--storage", url])
    finally:
        with su.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
        su.dispose()
    for result in (ran, shown):
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1, result.output
        assert "is not currently accepting connections" in lines[0], result.output
        assert "ALLOW_CONNECTIONS true" in lines[0], result.output
        assert "does not answer" not in result.output and "run it again once" not in result.output, result.output
