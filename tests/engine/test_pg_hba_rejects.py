"""A storage a ``reject`` line of pg_hba.conf refuses (``pg_hba.conf rejects connection for host ...``):
the administrator's rule, on every try, as its sibling ``no pg_hba.conf entry`` (src/backend/libpq/auth.c).

QA (qa167): ``tuner study run --study NAME`` waited out its whole patience on it (``does not answer``,
then ``did not answer``, exit 75) and ``status`` said ``run it again once the storage answers``,
where no entry at all was refused at once: it is now a refusal too, exit 2 at once.
The session's own server (support.pg.PgCluster): a reject line for the test's database alone is put
first in its pg_hba.conf and the configuration reloaded; the file is restored after.
"""

import sqlalchemy as sa
from support.pg_refusals import PATIENCE_S, assert_refused_at_once, run_and_status, study_database, superuser


def test_a_reject_rule_is_refused_at_once(pg_cluster, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", PATIENCE_S)
    url = pg_cluster.database()
    name = study_database(url, "rejected")
    hba = pg_cluster.dir / "data" / "pg_hba.conf"
    before = hba.read_text()
    su = superuser(pg_cluster)
    try:
        hba.write_text(f"host {name} all 127.0.0.1/32 reject\n" + before)
        with su.connect() as conn:
            conn.execute(sa.text("SELECT pg_reload_conf()"))
        results = run_and_status("rejected", url)
    finally:
        hba.write_text(before)
        with su.connect() as conn:
            conn.execute(sa.text("SELECT pg_reload_conf()"))
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
        su.dispose()
    assert_refused_at_once(results, "pg_hba.conf rejects connection")
