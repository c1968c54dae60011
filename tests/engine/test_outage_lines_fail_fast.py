"""A call made inside ``fail_fast`` (the pruning decision while a server measures) that fails is not
said as an outage (tuner/engine/patience.py ``PatientRDBStorage._outage_started``): it is not
retried, so "retrying for up to ..." was untrue, and the next call that succeeded said "answers
again after 0.0 s" between two "does not answer" lines (QA, qa108: a flip-flop in one outage).

Real PostgreSQL, in-process: another session holds ``trials`` locked, so a call that reads it fails
on the session's lock_timeout while a call on ``studies`` answers."""

import optuna
import sqlalchemy as sa

from tuner.engine.patience import StorageUnavailable, fail_fast
from tuner.engine.storage import driver_url, open_storage


def test_a_fail_fast_failure_then_an_answer_says_no_outage(pg_url, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")
    events = []
    storage = open_storage(pg_url, patient=True, on_outage=lambda kind, info: events.append(kind))
    study = optuna.create_study(study_name="flip", storage=storage, directions=["maximize"])

    def fast_then_answered():
        failed = None
        with fail_fast():
            try:
                study.get_trials(deepcopy=False)
            except StorageUnavailable as exc:
                failed = exc
        return failed, storage.get_all_studies()

    engine = sa.create_engine(driver_url(pg_url), poolclass=sa.pool.NullPool)
    try:
        with engine.connect() as conn, conn.begin():
            conn.execute(sa.text("LOCK TABLE trials IN ACCESS EXCLUSIVE MODE"))
            out = fast_then_answered()  # the main thread: the one whose outages are said
    finally:
        engine.dispose()
    failed, studies = out
    assert "lock timeout" in str(failed), failed  # the fault was met, and not waited out
    assert [s.study_name for s in studies] == ["flip"]
    # before the fix: ["storage_down", "storage_back"] ("answers again after 0.0 s")
    assert events == [], events
    storage.engine.dispose()
