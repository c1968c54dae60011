"""A PostgreSQL database that answers but refuses writes (``default_transaction_read_only``, a hot
standby) is said as such: ``storage ... refuses writes (ReadOnlySqlTransaction ...)``, not ``does
not answer`` (QA, qa158: the line's first words sent the reader looking for a dead server).

Real PostgreSQL (support.pg), the patient storage's own ``storage_down`` event, the progress line
made of it (tuner/cli/progress.py ``storage_line``).
"""

import optuna
import pytest
import sqlalchemy as sa

from tuner.cli.progress import storage_line
from tuner.engine.patience import StorageUnavailable
from tuner.engine.storage import open_storage


def _set_read_only(url: str, on: bool) -> None:
    target = sa.engine.make_url(url).set(drivername="postgresql+psycopg2")
    name = target.database
    # from another database: a session of the read-only one could not reset it
    admin = sa.create_engine(target.set(database="postgres"), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        with admin.connect() as conn:
            conn.execute(sa.text(f'ALTER DATABASE "{name}" '
                                 + ("SET default_transaction_read_only = on" if on else
                                    "RESET default_transaction_read_only")))
    finally:
        admin.dispose()


def test_a_database_refusing_writes_is_said_to_refuse_writes_not_to_be_silent(pg_cluster, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "1")
    url = pg_cluster.database()
    storage = open_storage(url, patient=True)
    heard: list[tuple[str, dict]] = []
    storage.on_outage = lambda kind, info: heard.append((kind, info))
    study = optuna.create_study(study_name="read-only-line", storage=storage, directions=["maximize"])
    _set_read_only(url, True)
    storage.engine.dispose()  # new sessions take the database's setting
    try:
        with pytest.raises(StorageUnavailable) as raised:
            study.set_user_attr("k", 1)
    finally:
        _set_read_only(url, False)
        storage.engine.dispose()
    downs = [info for kind, info in heard if kind == "storage_down"]
    assert downs, heard
    line = storage_line("storage_down", downs[0])
    assert " refuses writes (" in line and "ReadOnlySqlTransaction" in line, line
    assert "does not answer" not in line, line
    # a storage that does not answer is still said so
    silent = {**downs[0], "error": "OperationalError: connection refused", "refuses_writes": False}
    assert " does not answer (OperationalError" in storage_line("storage_down", silent)
    # and the line that stops the worker past the patience (QA, qa163: "did not answer for 1 s")
    stop = str(raised.value)
    assert stop.startswith(f"storage {downs[0]['storage']} refused writes for "), stop
    assert "did not answer" not in stop and "ReadOnlySqlTransaction" in stop, stop
