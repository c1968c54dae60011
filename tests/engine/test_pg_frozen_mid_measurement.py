"""A PostgreSQL server that freezes while a worker measures (every process of the cluster stopped
with SIGSTOP): the storage calls made meanwhile, inside ``fail_fast`` (the pruning decision between
two stages, the check of the study before the journal entry), must not hold the measurement up
(tuner/engine/pg_sessions.py ``reply_limit_s``, patience.py ``fail_fast``).

QA (qa154): such a call waited for its reply as long as any patient call, twice the lock wait
(120 s at the default patience): a real `tuner study run` at ``TUNER_STORAGE_PATIENCE_S=10`` with
the cluster frozen mid-suite stood still 30 s between two stages (the 20 s reply wait, then a
connect timeout), and the finished measurement waited in memory alone before its journal entry.
Now its sessions are cut after the reply watch's floor (10 s) and the call fails at once, as any
outage inside ``fail_fast`` does; the caller measures on.

The session's own server (support.pg.PgCluster), frozen and thawed as in test_pg_frozen_session.
"""

import threading

import optuna
import pytest
from test_pg_frozen_session import all_frozen

from tuner.engine.patience import StorageUnavailable, fail_fast
from tuner.engine.pg_sessions import MIN_REPLY_WAIT_S, reply_limit_s
from tuner.engine.storage import open_storage


def test_a_call_that_must_not_hold_a_measurement_up_is_cut_at_the_floor_on_a_frozen_server(
        pg_cluster, monkeypatch):
    # patience 60: a patient call waits 120 s for its reply (twice the lock wait), far past the
    # thaw (test_pg_frozen_session.THAW_S, 60 s): before the fix the call below got its reply only
    # once the timer thawed the server, and raised nothing
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "60")
    assert reply_limit_s() == 120
    storage = open_storage(pg_cluster.database(), patient=True)
    study = optuna.create_study(study_name="frozen-mid-suite", storage=storage, directions=["maximize"])
    trial_id = storage.create_new_trial(study._study_id)  # RUNNING, as a measured trial is
    heard: list[str] = []
    storage.on_outage = lambda kind, info: heard.append(kind)
    with all_frozen(pg_cluster):
        # the stage judge's write (tuner/engine/pruning.py), on a pooled session the freeze caught
        with fail_fast(), pytest.raises(StorageUnavailable) as raised:
            storage.set_trial_intermediate_value(trial_id, 0, 1.5)
    assert f"NoReply: no reply within {MIN_REPLY_WAIT_S:.0f} s" in str(raised.value), raised.value
    assert heard == [], heard  # not retried, so not said as an outage (the next patient call says it)
    # a patient call of another thread is bounded as before: the floor is fail_fast's alone
    bounds: list[float] = []
    other = threading.Thread(target=lambda: bounds.append(reply_limit_s()))
    other.start()
    with fail_fast():
        other.join()
        assert reply_limit_s() == MIN_REPLY_WAIT_S
    assert bounds == [120], bounds
    # thawed: the same storage writes again, and the value the cut call never sent is not there
    storage.set_trial_intermediate_value(trial_id, 1, 2.5)
    assert study.trials[0].intermediate_values == {1: 2.5}
    storage.engine.dispose()
