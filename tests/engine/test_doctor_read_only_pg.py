"""`tuner doctor` on a PostgreSQL database that refuses writes says why and what makes it writable
(QA, qa154: it said "ReadOnlySqlTransaction ...: check the URL, the server and the user's rights",
without the hint the run's own lines give, tuner.engine.patience.READ_ONLY_HINT)."""

import sqlalchemy as sa
from support.demo_study import demo_study

from tuner.config.study import load_study
from tuner.engine.doctor import FAIL, WARN, check_storage
from tuner.engine.patience import READ_ONLY_HINT


def test_doctor_names_the_read_only_database_and_its_fix(tmp_path, pg_url):
    db = pg_url.rsplit("/", 1)[1]
    engine = sa.create_engine(pg_url.replace("postgresql://", "postgresql+psycopg2://", 1),
                              isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    with engine.connect() as conn:  # the owner may: new sessions of the database start read-only
        conn.execute(sa.text(f'ALTER DATABASE "{db}" SET default_transaction_read_only = on'))
    engine.dispose()
    config = load_study(demo_study(tmp_path, storage=pg_url))
    c = check_storage(config)
    assert c.status == FAIL and "ReadOnlySqlTransaction" in c.message, c
    assert READ_ONLY_HINT in c.message and "check the URL" not in c.message, c
    assert len(c.message.splitlines()) == 1, c
    c = check_storage(config, outage_ok=True)  # study run's check: the run waits for writes
    assert c.status == WARN and READ_ONLY_HINT in c.message, c
