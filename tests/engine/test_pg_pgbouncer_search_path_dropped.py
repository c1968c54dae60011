"""A storage URL naming its schema (``?options=-csearch_path%3Dtuner``) through a real PgBouncer told
to ignore the ``options`` startup parameter (``ignore_startup_parameters = options``, the usual answer
to its refusal): every command refuses in one line, and nothing is made in the wrong schema.

QA (qa176): `tuner study create` through such a bouncer made the study's tables in ``public`` while
the nodes connecting to PostgreSQL directly with the same URL used schema ``tuner``: two studies of
one name, each with its own budget, and no line said so; `tuner doctor` passed it.
"""

import pytest
import sqlalchemy as sa
from support.demo_study import demo_study
from support.pgbouncer import pgbouncer

from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError
from tuner.engine.doctor import FAIL, check_storage
from tuner.engine.storage import driver_url, open_storage

OPTIONS = "?options=-csearch_path%3Dtuner"
SAID = "the URL's search_path (options=) did not reach the session (dropped by a pooler"


def _tables(url: str) -> dict:
    engine = sa.create_engine(driver_url(url), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            rows = conn.execute(sa.text("SELECT table_schema, count(*) FROM information_schema.tables "
                                        "WHERE table_schema IN ('public', 'tuner') GROUP BY 1")).all()
    finally:
        engine.dispose()
    return dict(rows)


def test_a_schema_the_bouncer_drops_is_refused_and_nothing_is_made(pg_url, tmp_path):
    engine = sa.create_engine(driver_url(pg_url), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("CREATE SCHEMA tuner"))
    finally:
        engine.dispose()
    with pgbouncer(pg_url, "transaction", tmp_path, ignore="options") as via:
        for create in (True, False):
            with pytest.raises(ConfigError) as refused:
                open_storage(via + OPTIONS, create=create)
            assert SAID in str(refused.value) and len(str(refused.value).splitlines()) == 1, refused.value
        assert _tables(pg_url) == {}  # nothing made in public
        c = check_storage(load_study(demo_study(tmp_path, storage=via + OPTIONS)))
        assert c.status == FAIL and SAID in c.message, c
    # the same URL to PostgreSQL itself: the schema reaches the session, and the study goes there
    built = open_storage(pg_url + OPTIONS)
    try:
        assert built.get_all_studies() == []
    finally:
        built.engine.dispose()
    assert set(_tables(pg_url)) == {"tuner"}
