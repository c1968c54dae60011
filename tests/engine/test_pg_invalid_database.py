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

import sqlalchemy as sa
from support.pg_refusals import PATIENCE_S, assert_refused_at_once, run_and_status, study_database, superuser


def test_a_database_a_drop_left_invalid_is_refused_at_once_with_its_fix(pg_cluster, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", PATIENCE_S)
    url = pg_cluster.database()
    name = study_database(url, "dropped")
    su = superuser(pg_cluster)
    try:
        with su.connect() as conn:
            conn.execute(sa.text("UPDATE pg_database SET datconnlimit = -2 WHERE datname = :name"), {"name": name})
        results = run_and_status("dropped", url)
    finally:
        with su.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}"'))
        su.dispose()
    assert_refused_at_once(results, "cannot connect to invalid database", "drop it")
