"""The storage's role set ``NOLOGIN`` under a running worker, on a real PostgreSQL
(tuner/engine/patience.py ``_PERMANENT``): no wait lets it in, as none does for a changed
password or a revoked ``CONNECT``, so the worker's call raises at once and its one line says the
storage refused it. QA (qa106): it was waited out for the whole patience (600 s by default) and
then said as "did not answer". A ``CONNECTION LIMIT`` the role is over is still an outage: it
frees up as sessions end.

The session's own server (support.pg.PgCluster): only a superuser alters a role.
"""

import optuna
import pytest
import sqlalchemy as sa

from tuner.engine.patience import StorageUnavailable, is_transient, storage_stop_line
from tuner.engine.storage import open_storage

PASSWORD = "n0#login@pw"


def test_a_role_set_nologin_stops_the_worker_at_once_and_a_connection_limit_is_waited_for(
        pg_cluster, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "3")
    role = "nologin_role"
    url = pg_cluster.database(user=role, password=PASSWORD)
    su = sa.create_engine(f"postgresql+psycopg2://postgres@/postgres?host={pg_cluster.dir}/sock"
                          f"&port={pg_cluster.port}", isolation_level="AUTOCOMMIT",
                          poolclass=sa.pool.NullPool)

    def sql(statement: str) -> None:
        with su.connect() as conn:
            conn.execute(sa.text(statement))

    storage = open_storage(url, patient=True)
    study = optuna.create_study(study_name="nologin", storage=storage, directions=["maximize"])
    try:
        sql(f'ALTER ROLE "{role}" CONNECTION LIMIT 0')
        sql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = '{role}'")
        with pytest.raises(StorageUnavailable) as waited:  # over the limit: an outage, waited out
            study.get_trials(deepcopy=False)
        assert "too many connections for role" in str(waited.value), waited.value

        sql(f'ALTER ROLE "{role}" CONNECTION LIMIT -1')
        sql(f'ALTER ROLE "{role}" NOLOGIN')
        with pytest.raises(Exception) as refused:
            study.get_trials(deepcopy=False)
        # before the fix: StorageUnavailable after the patience, "did not answer"
        assert not isinstance(refused.value, StorageUnavailable), refused.value
        assert not is_transient(refused.value)
        line = storage_stop_line(refused.value, url)
        assert f"postgresql://{role}:***@127.0.0.1:{pg_cluster.port}/" in line, line
        assert "is not permitted to log in" in line and "refused this worker" in line, line
        assert "check the storage URL (its password, role and database) and the role's rights" in line, line
        assert PASSWORD not in line and "did not answer" not in line, line
    finally:
        sql(f'ALTER ROLE "{role}" LOGIN CONNECTION LIMIT -1')
        storage.engine.dispose()
        su.dispose()
    # the role let in again, the same storage reads the study: nothing was lost
    assert study.get_trials(deepcopy=False) == []
    storage.engine.dispose()
