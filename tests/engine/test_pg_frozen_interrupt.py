"""Ctrl-C or SIGTERM to a worker whose PostgreSQL froze under an open session (every process of the
cluster stopped with SIGSTOP): the signal's exception surfaces only once the reply watch has cut the
sessions, inside the storage call that waited (tuner/engine/patience.py ``_patiently``), and no
error of the storage was seen (tuner/engine/trial.py asks ``unreachable_now`` before it fails and
queues the interrupted trial).

QA (qa154): SIGTERM to a `tuner study run` at ``TUNER_STORAGE_PATIENCE_S=60`` whose cluster froze
mid-suite stopped the server, then the cleanup failed the trial on the frozen storage: it waited the
whole patience and the worker ended 83 s after the signal with exit 75 (``did not answer for 70
s``), not 143. Now such an interrupt marks the storage away, and the cleanup leaves the trial to the
next worker's reaper, as for a Ctrl-C while the storage is known to be away.

The session's own server (support.pg.PgCluster), frozen and thawed as in test_pg_frozen_session;
the signal is a real SIGINT to this process, from a timer thread while the main thread waits.
"""

import os
import signal
import threading

import optuna
import pytest
from support.processes import ctrl_c_raises
from test_pg_frozen_session import all_frozen

from tuner.engine.patience import unreachable_now
from tuner.engine.storage import open_storage


def test_an_interrupt_landing_in_a_call_the_server_never_answered_marks_the_storage_away(
        pg_cluster, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")  # the reply watch's floor: cut after 10 s
    storage = open_storage(pg_cluster.database(), patient=True)
    study = optuna.create_study(study_name="frozen-interrupt", storage=storage, directions=["maximize"])
    assert study.get_trials(deepcopy=False) == []  # a pooled session is open to the server
    assert not unreachable_now(storage)
    sent = threading.Timer(2.0, os.kill, args=(os.getpid(), signal.SIGINT))
    sent.daemon = True
    with all_frozen(pg_cluster), ctrl_c_raises():
        sent.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                study.get_trials(deepcopy=False)
        finally:
            sent.cancel()
    # before the fix: False, so the worker's cleanup failed the trial on the frozen storage, waiting
    # out its patience
    assert unreachable_now(storage)
    assert study.get_trials(deepcopy=False) == []  # thawed: the same storage reads again
    assert not unreachable_now(storage)  # and knows it answers
    storage.engine.dispose()
