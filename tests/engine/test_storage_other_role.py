"""Another user's PostgreSQL URL: a role that may not use the study's tables (another role made
them), or may not connect to its database. QA (qa159): ``tuner study status`` with such a URL in
``TUNER_STORAGE`` said "cannot open: InsufficientPrivilege: permission denied for table version_info"
(or "... FATAL: permission denied for database ...") and named no fix; now the line names the role
and the fix, and the GRANT it names is the one that lets the role read the study.

The session's own server (support.pg.PgCluster): its superuser makes the roles and revokes CONNECT.
"""

import uuid

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from tuner.config.yamlfile import ConfigError
from tuner.engine.storage import driver_url, open_storage

PASSWORD = "s3cr#t/pw"


def test_a_role_refused_the_tables_or_the_database_is_told_the_fix(pg_cluster):
    tag = uuid.uuid4().hex[:8]
    owner_url = pg_cluster.database(user=f"owner_{tag}", password=PASSWORD)
    other_url = pg_cluster.database(user=f"other_{tag}", password=PASSWORD)
    database = make_url(owner_url).database
    open_storage(owner_url)  # the owner's tables
    theirs = make_url(other_url).set(database=database).render_as_string(hide_password=False)

    with pytest.raises(ConfigError) as refused:
        open_storage(theirs, create=False)
    role = f"other_{tag}"
    assert refused.value.message.endswith(
        f"cannot open: InsufficientPrivilege: permission denied for table version_info; the role {role} has no "
        f"rights on the study's tables (another role's): use the URL of the role that created the study, or have "
        f"it run GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}; GRANT USAGE ON "
        f"ALL SEQUENCES IN SCHEMA public TO {role}"), refused.value.message
    assert PASSWORD not in str(refused.value)

    owner = sa.create_engine(driver_url(owner_url), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with owner.connect() as conn:  # the fix the line names
            conn.execute(sa.text(f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}; "
                                 f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}"))
            conn.execute(sa.text(f'REVOKE CONNECT ON DATABASE "{database}" FROM PUBLIC'))
    finally:
        owner.dispose()
    with pytest.raises(ConfigError) as no_connect:
        open_storage(theirs, create=False)
    assert no_connect.value.message.endswith(
        f'permission denied for database "{database}"; the role {role} may not connect to {database}: use the URL '
        f"of a role that may (the one that created the study), or have its owner run GRANT CONNECT ON DATABASE "
        f"{database} TO {role}"), no_connect.value.message

    owner = sa.create_engine(driver_url(owner_url), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with owner.connect() as conn:
            conn.execute(sa.text(f'GRANT CONNECT ON DATABASE "{database}" TO {role}'))
    finally:
        owner.dispose()
    assert open_storage(theirs, create=False).get_all_studies() == []  # the grants were enough
