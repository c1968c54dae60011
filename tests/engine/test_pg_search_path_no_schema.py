"""A search_path that names no existing schema (a name mistyped in the URL's
``?options=-csearch_path%3D...``): `tuner study create` and `tuner doctor` name the cause and the fix.

QA (qa176): both said PostgreSQL's words alone, "InvalidSchemaName: no schema has been selected to
create in", which names neither the search_path nor what to do.
"""

import pytest
import sqlalchemy as sa
from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError
from tuner.engine.doctor import FAIL, check_storage
from tuner.engine.storage import driver_url, open_storage

FIX = "fix the schema's name, or create it: CREATE SCHEMA NAME AUTHORIZATION ROLE"


def test_a_search_path_of_no_schema_names_the_fix(pg_url, tmp_path):
    url = pg_url + "?options=-csearch_path%3Dtunr"  # the schema is "tuner"
    with pytest.raises(ConfigError) as refused:
        open_storage(url)
    assert "no schema has been selected to create in" in refused.value.message, refused.value.message
    assert FIX in refused.value.message and len(str(refused.value).splitlines()) == 1, refused.value.message
    c = check_storage(load_study(demo_study(tmp_path, storage=url)))
    assert c.status == FAIL and FIX in c.message, c
    engine = sa.create_engine(driver_url(pg_url), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:  # nothing was made anywhere
            made = conn.execute(sa.text("SELECT count(*) FROM information_schema.tables "
                                        "WHERE table_name = 'studies'")).scalar()
    finally:
        engine.dispose()
    assert made == 0
