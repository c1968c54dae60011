"""A role that may not create in the database's schema ``public`` (PostgreSQL 15's default for every
role but the database's owner): `tuner study create` and `tuner doctor` name the schema and the fix.

QA (qa176): on a database another role owns, `tuner study create` said "permission denied for schema
public; the role nc has no rights on the study's tables (another role's): ... GRANT SELECT, INSERT,
UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO nc ...", a grant on tables that do not exist, which
changes nothing; and `tuner doctor` passed the storage as "reachable and writable" (its probe was a
temporary table, which needs no right on the schema).

The session's own server (support.pg.PgCluster): its superuser makes the role and owns the database.
Both fixes the line names are then applied, and the storage opens with each.
"""

import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import URL
from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError
from tuner.engine.doctor import FAIL, check_storage
from tuner.engine.storage import driver_url, open_storage

PASSWORD = "n0#create/pw"


def _superuser(cluster):
    return sa.create_engine(f"postgresql+psycopg2://postgres@/postgres?host={cluster.dir}/sock&port={cluster.port}",
                            isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)


def _run(engine, *statements):
    try:
        with engine.connect() as conn:
            for statement in statements:
                conn.execute(sa.text(statement))
    finally:
        engine.dispose()


def test_no_create_on_public_is_one_line_naming_the_grant_or_a_schema(pg_cluster, tmp_path):
    tag = uuid.uuid4().hex[:8]
    role, database = f"nocreate_{tag}", f"tuner_test_{tag}"
    _run(_superuser(pg_cluster), f"CREATE ROLE {role} LOGIN PASSWORD '{PASSWORD}'",
         f'CREATE DATABASE "{database}"')  # owned by the superuser: public is not the role's to create in
    url = URL.create("postgresql", username=role, password=PASSWORD, host="127.0.0.1", port=pg_cluster.port,
                     database=database).render_as_string(hide_password=False)

    with pytest.raises(ConfigError) as refused:
        open_storage(url)
    message = refused.value.message
    assert "permission denied for schema public; " in message, message
    assert (f"have the database's owner run GRANT USAGE, CREATE ON SCHEMA public TO {role}, or give the study a "
            f"schema of its own: CREATE SCHEMA tuner AUTHORIZATION {role}, and add "
            "?options=-csearch_path%3Dtuner to the URL") in message, message
    assert "ON ALL TABLES" not in message and PASSWORD not in str(refused.value)
    assert len(str(refused.value).splitlines()) == 1

    c = check_storage(load_study(demo_study(tmp_path, storage=url)))
    assert c.status == FAIL, c
    assert "GRANT USAGE, CREATE ON SCHEMA public TO <role>" in c.message and PASSWORD not in c.message, c
    assert len(c.message.splitlines()) == 1, c

    # the schema of its own, named in the URL
    db_super = _superuser(pg_cluster).url.set(database=database)
    _run(sa.create_engine(db_super, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool),
         f"CREATE SCHEMA tuner AUTHORIZATION {role}")
    in_schema = url + "?options=-csearch_path%3Dtuner"
    assert check_storage(load_study(demo_study(tmp_path, name="demo2", storage=in_schema))).status != FAIL
    built = open_storage(in_schema)
    try:
        assert built.get_all_studies() == []
    finally:
        built.engine.dispose()
    # or the grant on public
    _run(sa.create_engine(db_super, isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool),
         f"GRANT USAGE, CREATE ON SCHEMA public TO {role}")
    built = open_storage(url)
    try:
        assert built.get_all_studies() == []
    finally:
        built.engine.dispose()
    engine = sa.create_engine(driver_url(url), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            schemas = set(conn.execute(sa.text("SELECT table_schema FROM information_schema.tables "
                                               "WHERE table_name = 'studies'")).scalars())
    finally:
        engine.dispose()
    assert schemas == {"tuner", "public"}
    _run(_superuser(pg_cluster), f'DROP DATABASE "{database}" WITH (FORCE)', f"DROP ROLE {role}")
