"""A trial creation behind a lock another session holds waits one lock wait per try, not five
(tuner/engine/patience.py ``_one_creation``), on a real PostgreSQL.

Optuna's ``_create_new_trial`` takes the study's row ``FOR UPDATE`` and tries five times on any
storage error (optuna/storages/_rdb/storage.py), so one try of the patient loop held five lock waits:
QA (qa136, ``tuner study run`` at ``TUNER_STORAGE_PATIENCE_S=6``, the study's row held by a
transaction left open) saw 33 s without a line, then "does not answer ... retrying for up to 0m06s"
and "did not answer for 33 s" together. The lock waits are counted here (each statement the server
cancels, SQLSTATE 55P03), not timed.
"""

import optuna
import sqlalchemy as sa
from support.bounded_call import in_thread

from tuner.engine.patience import LOCK_HINT, StorageUnavailable
from tuner.engine.storage import driver_url, open_storage
from tuner.engine.urls import sqlstate


def test_a_creation_behind_a_held_study_row_gives_up_after_one_lock_wait(pg_url, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")  # the lock wait of every session: 2 s
    storage = open_storage(pg_url, patient=True)
    study = optuna.create_study(study_name="held", storage=storage, directions=["maximize"])
    lock_waits = []
    sa.event.listen(storage.engine, "handle_error",
                    lambda ctx: lock_waits.append(sqlstate(ctx.original_exception)) and None)
    # a transaction left open in psql, holding what Optuna's creation takes first
    engine = sa.create_engine(driver_url(pg_url), poolclass=sa.pool.NullPool)
    conn = engine.connect()
    try:
        conn.begin()
        conn.execute(sa.text("SELECT study_id FROM studies WHERE study_id = :s FOR UPDATE"),
                     {"s": study._study_id})
        out = in_thread(lambda: storage.create_new_trial(study._study_id))
    finally:
        conn.close()
        engine.dispose()
    assert out, "the creation waited for the lock with no end"
    error = out.get("error")
    assert isinstance(error, StorageUnavailable), out
    said = str(error)
    assert "TUNER_STORAGE_PATIENCE_S=2" in said and "LockNotAvailable" in said, said
    assert said.endswith(f"({LOCK_HINT})"), said
    # before the fix: five (Optuna's own tries, each a whole lock wait, inside one try of the patience)
    assert lock_waits == ["55P03"], lock_waits
    # the lock gone, the same storage creates the trial, once
    storage.create_new_trial(study._study_id)
    assert [t.number for t in storage.get_all_trials(study._study_id, deepcopy=False)] == [0]
    storage.engine.dispose()
