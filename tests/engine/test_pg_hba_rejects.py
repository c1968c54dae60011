"""A storage a ``reject`` line of pg_hba.conf refuses (``pg_hba.conf rejects connection for host ...``):
the administrator's rule, on every try, as its sibling ``no pg_hba.conf entry`` (src/backend/libpq/auth.c).

QA (qa167): ``tuner study run --study NAME`` waited out its whole patience on it (``does not answer``,
then ``did not answer``, exit 75) and ``status`` said ``run it again once the storage answers``,
where no entry at all was refused at once: it is now a refusal too, exit 2 at once.
The session's own server (support.pg.PgCluster): a reject line for the test's database alone is put
first in its pg_hba.conf and the configuration reloaded; the file is restored after.
"""

import optuna
import sqlalchemy as sa
from click.testing import CliRunner

from tuner.cli import cli
from tuner.engine.storage import open_storage


def test_a_reject_rule_is_refused_at_once(pg_cluster, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "30")  # before the fix: 30 s of waiting, then exit 75
    url = pg_cluster.database()
    storage = open_storage(url)
    optuna.create_study(study_name="rejected", storage=storage, directions=["maximize"])
    storage.engine.dispose()
    name = sa.engine.make_url(url).database
    hba = pg_cluster.dir / "data" / "pg_hba.conf"
    before = hba.read_text()
    su = sa.create_engine(f"postgresql+psycopg2://postgres@/postgres?host={pg_cluster.dir}/sock&port={pg_cluster.port}",
                          isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        hba.write_text(f"host {name} all 127.0.0.1/32 reject\n" + before)
        with su.connect() as conn:
            conn.execute(sa.text("SELECT pg_reload_conf()"))
        ran = CliRunner().invoke(cli, ["study", "run", "--study", "rejected", "--storage", url])
        shown = CliRunner().invoke(cli, ["study", "status", "--study", "rejected", "--storage", url])
    finally:
        hba.write_text(before)
        with su.connect() as conn:
            conn.execute(sa.text("SELECT pg_reload_conf()"))
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
        su.dispose()
    for result in (ran, shown):
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert len(lines) == 1, result.output
        assert "pg_hba.conf rejects connection" in lines[0], result.output
        assert "does not answer" not in result.output and "run it again once" not in result.output, result.output
