"""`tuner doctor`'s write probe of a PostgreSQL storage whose study tables exist tests the writes a
run makes on them, not a temporary table (QA, qa190):

- a role refused TEMPORARY on the database (``REVOKE TEMPORARY ON DATABASE ... FROM PUBLIC``, a
  common hardening) failed doctor with "permission denied to create temporary tables", and `study
  run`, whose cheap checks are doctor's, refused to start, though Optuna makes no temporary table;
- a role that may only read the tables passed as "reachable and writable", and its run stopped at
  its first write ("refused this worker (InsufficientPrivilege: permission denied for table ...)").

The session's own server (support.pg.PgCluster): its superuser makes the roles.
"""

import uuid

import sqlalchemy as sa
from sqlalchemy.engine import make_url
from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.engine.doctor import FAIL, check_storage
from tuner.engine.storage import driver_url, open_storage

PASSWORD = "pw/7#x"


def _as(url: str, *statements: str) -> None:
    engine = sa.create_engine(driver_url(url), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            for statement in statements:
                conn.execute(sa.text(statement))
    finally:
        engine.dispose()


def _sequence(url: str) -> tuple:
    engine = sa.create_engine(driver_url(url), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            return tuple(conn.execute(sa.text("SELECT last_value, is_called FROM trials_trial_id_seq")).one())
    finally:
        engine.dispose()


def test_the_probe_asks_the_rights_a_run_uses_on_the_tables(tmp_path, pg_cluster):
    tag = uuid.uuid4().hex[:8]
    owner_url = pg_cluster.database(user=f"owner_{tag}", password=PASSWORD)
    other_url = pg_cluster.database(user=f"other_{tag}", password=PASSWORD)
    database, role = make_url(owner_url).database, f"other_{tag}"
    open_storage(owner_url).engine.dispose()  # the owner's study tables
    theirs = make_url(other_url).set(database=database).render_as_string(hide_password=False)
    config = load_study(demo_study(tmp_path, storage=theirs))
    before = _sequence(owner_url)

    _as(owner_url, f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")  # may read, not write
    c = check_storage(config)
    # before the fix: warn, "... is reachable and writable, but fsync=off ..." (a temporary table)
    assert c.status == FAIL and "InsufficientPrivilege: permission denied for table" in c.message, c
    assert f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}" in c.message, c
    assert PASSWORD not in c.message

    _as(owner_url, f"GRANT INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO {role}")
    c = check_storage(config)  # the sequences too: a trial's row takes its id from one
    assert c.status == FAIL and "permission denied for sequence" in c.message, c

    _as(owner_url, f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}",
        f'REVOKE TEMPORARY ON DATABASE "{database}" FROM PUBLIC')
    c = check_storage(config)
    # before the fix: fail, "permission denied to create temporary tables in database ..."
    assert c.status != FAIL and "reachable and writable" in c.message, c
    assert _sequence(owner_url) == before  # nothing advanced, nothing written
