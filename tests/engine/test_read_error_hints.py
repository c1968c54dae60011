"""A read command's one line for a storage error (tuner/engine/storage.py ``storage_failure_line``)
names the fix the run's lines name (tuner/engine/patience.py ``said``): QA (qa108) saw `tuner study
status` blocked by another session's ``LOCK TABLE`` say only "LockNotAvailable: canceling statement
due to lock timeout", where `tuner study run` said who is in the way and where to see it.
Real PostgreSQL, in-process: the error is the one the driver raises on the session's lock_timeout."""

import optuna
import sqlalchemy as sa
from support.bounded_call import in_thread

from tuner.engine.patience import LOCK_HINT
from tuner.engine.storage import OPENED, driver_url, open_storage, storage_failure_line


def test_a_read_blocked_by_a_lock_says_who_is_in_the_way(pg_url, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")  # the session's lock_timeout: at most 2 s
    since = len(OPENED)
    storage = open_storage(pg_url)  # a read command's: not patient
    study = optuna.create_study(study_name="locked", storage=storage, directions=["maximize"])
    engine = sa.create_engine(driver_url(pg_url), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn, conn.begin():
            conn.execute(sa.text("LOCK TABLE trials IN ACCESS EXCLUSIVE MODE"))
            out = in_thread(lambda: study.get_trials(deepcopy=False))
    finally:
        engine.dispose()
        storage.engine.dispose()
    assert "error" in out, out
    line = storage_failure_line(out["error"], since=since)
    assert line is not None and "lock timeout" in line, line
    assert f"({LOCK_HINT})" in line, line
    password = sa.engine.make_url(pg_url).password
    assert not password or password not in line
