"""A study's database left invalid by a ``DROP DATABASE`` cut short (PostgreSQL 15.4+: the database
is marked invalid first, then its files go; a failure between the two, e.g. a checkpoint that
fails on a full tablespace, leaves it so, and every connection is refused with ``cannot connect to
invalid database``) (tuner/engine/patience.py ``_PERMANENT``, ``said``).

QA (qa154): a real DROP DATABASE whose checkpoint failed left the database so; `tuner study run
--study NAME` on it waited out its whole patience, ``does not answer`` then ``did not answer`` and
exit 75, and a read command said ``run it again once the storage answers``: no wait fixes it. Now
it is refused at once, exit 2, with what fixes it (PostgreSQL's own hint is not on the first line).

The session's own server (support.pg.PgCluster): the database is marked invalid as ``dropdb`` marks
it (``pg_database.datconnlimit = -2``, src/backend/commands/dbcommands.c) by the superuser, then
dropped.
"""

import optuna
import sqlalchemy as sa
from click.testing import CliRunner

from tuner.cli import cli
from tuner.engine.storage import open_storage


def test_a_database_a_drop_left_invalid_is_refused_at_once_with_its_fix(pg_cluster, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "30")  # before the fix: 30 s of waiting, then exit 75
    url = pg_cluster.database()
    storage = open_storage(url)
    optuna.create_study(study_name="dropped", storage=storage, directions=["maximize"])
    storage.engine.dispose()
    name = sa.engine.make_url(url).database
    socket = f"host={pg_cluster.dir}/sock&port={pg_cluster.port}"
    su = sa.create_engine(f"postgresql+psycopg2://postgres@/postgres?{socket}", isolation_level="AUTOCOMMIT",
                          poolclass=sa.pool.NullPool)
    try:
        with su.connect() as conn:
            conn.execute(sa.text("UPDATE pg_database SET datconnlimit = -2 WHERE datname = :name"), {"name": name})
        ran = CliRunner().invoke(cli, ["study", "run", "--study", "dropped", "--storage", url])
        shown = CliRunner().invoke(cli, ["study", "status", "--study", "dropped", "--storage", url])
    finally:
        with su.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
        su.dispose()
    for result in (ran, shown):
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1, result.output
        assert "cannot connect to invalid database" in lines[0] and "drop it" in lines[0], result.output
        assert "does not answer" not in result.output and "run it again once" not in result.output, result.output
