"""A worker frozen inside a transaction does not hold the other workers of its study
(tuner/engine/pg_sessions.py ``session_settings``: ``idle_in_transaction_session_timeout``).

Optuna's trial creation holds the study's row ``FOR UPDATE`` until it commits
(optuna/storages/_rdb/storage.py, ``_create_new_trial``). A worker frozen there (SIGSTOP, a paused VM,
a node whose network dropped: the server keeps the session, idle in its transaction) held every other
worker's next trial: QA (qa136, two ``tuner study run`` on one PostgreSQL study at
``TUNER_STORAGE_PATIENCE_S=20``, one stopped with SIGSTOP inside its trial creation for 70 s) saw the
other worker stand still just as long, not a line said; frozen longer than Optuna's five lock waits and
the patience, the healthy workers all exit 75. The server now ends a tuner session left idle in a
transaction after half the lock wait: the others go on, and the frozen worker, awake, retries on a new
session.

The frozen worker is a session of the tuner's own storage that took the lock Optuna's creation takes
and then sends nothing, as a stopped process does; the call under test runs in a thread joined with a
bound, so the test fails instead of hanging; the session is closed in ``finally`` either way.
"""

import optuna
import sqlalchemy as sa
from support.bounded_call import in_thread

from tuner.engine.patience import is_transient
from tuner.engine.storage import open_storage


def test_a_worker_frozen_inside_its_trial_creation_does_not_hold_the_others(pg_url, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "12")  # lock wait 12 s; idle in a transaction: 6 s
    frozen_node = open_storage(pg_url, patient=True)
    other_node = open_storage(pg_url, patient=True)
    study = optuna.create_study(study_name="frozen", storage=frozen_node, directions=["maximize"])
    study_id = study._study_id
    conn = frozen_node.engine.connect()
    try:
        conn.begin()
        # what Optuna's trial creation takes first; then the process stops and sends nothing more
        conn.execute(sa.text("SELECT study_id FROM studies WHERE study_id = :s FOR UPDATE"), {"s": study_id})
        out = in_thread(lambda: other_node.create_new_trial(study_id))
        # before the fix: the other worker waited for the frozen one's lock, five lock waits in
        # Optuna's own retry and then its patience, and gave up (StorageUnavailable)
        assert "value" in out, out
        # the frozen worker, awake, finds its session ended by the server: an outage it retries
        try:
            conn.execute(sa.text("SELECT 1"))
        except sa.exc.OperationalError as exc:
            assert is_transient(exc), exc
        else:
            raise AssertionError("the frozen worker's session outlived its idle transaction")
    finally:
        conn.close()
    # and its storage goes on, on a new session: both trials are there, each once
    frozen_node.create_new_trial(study_id)
    trials = other_node.get_all_trials(study_id, deepcopy=False)
    assert [t.number for t in trials] == [0, 1], trials
    assert {t.state for t in trials} == {optuna.trial.TrialState.RUNNING}
    frozen_node.engine.dispose()
    other_node.engine.dispose()
