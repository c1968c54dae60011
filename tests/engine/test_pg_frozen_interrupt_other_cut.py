"""A signal landing in a storage call of a frozen PostgreSQL whose session another call's cut ended
(the reply watch cuts every session of the engine: the heartbeat thread's beat, bounded sooner
inside ``fail_fast``), before this call's own cut fired: the storage must be marked away
(tuner/engine/patience.py ``_patiently``), as when the call's own cut fired.

QA (qa158): SIGTERM to a worker 3 s after its cluster froze (``TUNER_STORAGE_PATIENCE_S=60``) ended
in 14 s in two runs of three, in 57 s in the third: the signal landed while psycopg2 built the error
of the cut session (in SQLAlchemy's pre-ping at pool checkout), this call's own cut not set, and the
main thread left ``_patiently`` before the other thread had marked the storage away; the cleanup
then failed and queued the trial on the frozen storage (a connect timeout, then the patience).

The race is driven in order at its seams, not by timing: the session's own server (support.pg.
PgCluster) frozen as in test_pg_frozen_session; the main thread and a helper thread (inside
``fail_fast``, as the heartbeat beats) both waiting on the frozen server in their pre-ping; a real
SIGINT to this process made pending; then the helper's cut done as its timer does
(``ReplyWatch._cut`` with the helper attempt's own event); the helper held at ``_outage_started``
until the main thread's interrupt is out, so only the main thread's own clause can mark the storage.
"""

import os
import signal
import sys
import threading
from contextlib import contextmanager

import optuna
import pytest
from support.processes import ctrl_c_raises
from test_pg_frozen_session import all_frozen

from tuner.engine.patience import PatientRDBStorage, StorageUnavailable, fail_fast, patient_backend, unreachable_now
from tuner.engine.storage import open_storage


def _in_ping(thread: threading.Thread) -> bool:
    frame = sys._current_frames().get(thread.ident)
    while frame is not None:
        if frame.f_code.co_name == "do_ping":
            return True
        frame = frame.f_back
    return False


def test_a_signal_landing_after_another_calls_cut_marks_the_storage_away(pg_cluster, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "60")  # the calls' own cuts: 10 s, 120 s; never here
    storage = open_storage(pg_cluster.database(), patient=True)
    backend = patient_backend(storage)
    watch = backend.reply_watch
    assert watch is not None
    study = optuna.create_study(study_name="frozen-other-cut", storage=storage, directions=["maximize"])
    with backend.engine.connect() as one, backend.engine.connect() as two:  # two pooled sessions to ping
        assert one is not two

    helper_cut: list[threading.Event] = []
    armed = watch.armed

    @contextmanager
    def recorded():
        with armed() as fired:
            if threading.current_thread().name == "helper":
                helper_cut.append(fired)
            yield fired

    monkeypatch.setattr(watch, "armed", recorded)
    release = threading.Event()
    started = PatientRDBStorage._outage_started

    def held(self, exc, patience):
        if threading.current_thread().name == "helper":
            release.wait(60)
        return started(self, exc, patience)

    monkeypatch.setattr(PatientRDBStorage, "_outage_started", held)
    helper_error: list[BaseException] = []

    def helper_call():
        with fail_fast():
            try:
                backend.get_all_studies()
            except BaseException as exc:  # noqa: BLE001 - looked at below
                helper_error.append(exc)

    helper = threading.Thread(target=helper_call, name="helper", daemon=True)
    main = threading.main_thread()

    def conduct():
        for _ in range(600):  # both waiting on the frozen server (at most 60 s)
            if helper_cut and _in_ping(helper) and _in_ping(main):
                break
            threading.Event().wait(0.1)
        os.kill(os.getpid(), signal.SIGINT)  # pending: the main thread waits in libpq
        watch._cut(helper_cut[0])  # the helper's timer firing: every session of the engine is cut

    conductor = threading.Thread(target=conduct, daemon=True)
    with all_frozen(pg_cluster), ctrl_c_raises():
        helper.start()
        conductor.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                study.get_trials(deepcopy=False)
            # before the fix: False (the helper has not marked it yet), and the worker's cleanup then
            # failed and queued the trial on the frozen storage
            assert unreachable_now(storage)
        finally:
            release.set()
    # thawed: the helper's reconnect (SQLAlchemy's after a failed pre-ping) is answered, not timed out
    conductor.join(60)
    helper.join(60)
    assert not helper.is_alive() and not conductor.is_alive()
    assert all(isinstance(e, StorageUnavailable) for e in helper_error), helper_error  # or it read
    assert study.get_trials(deepcopy=False) == []  # thawed: the same storage reads again
    assert not unreachable_now(storage)
    storage.engine.dispose()
