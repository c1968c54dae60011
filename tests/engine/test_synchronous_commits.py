"""Every commit of the tuner waits for its WAL write, whatever the PostgreSQL server's default.

A server run with ``synchronous_commit = off`` (a common tuning, and how ``.ci/postgres.sh`` starts
the test servers) acknowledges a commit before writing it; ``pg_ctl restart -m immediate``, a crash of
the server process, or an OOM kill then forgets the last fraction of a second of commits. The random
fault mode met what that does to a study (QA, qa77/qa79: a trial gone under its worker, a queued
trial started twice, a tell lost and its setting measured again, a status lost). ``synchronous_commit``
is a setting any session may choose (PostgreSQL's ``USERSET``); the tuner's sessions now choose ``on``
(tuner.engine.storage), so what the server acknowledged to a worker survives an immediate restart.
``fsync = off`` is not overridden (a server setting): an operating-system crash may still lose
commits there, which ``tuner doctor`` warns of.
"""

from __future__ import annotations

import optuna
import pytest
import sqlalchemy as sa
from optuna.trial import TrialState

from tuner.engine.asktell import ask, tell
from tuner.engine.storage import open_storage

DIST = {"x": optuna.distributions.IntDistribution(0, 9)}


def session_setting(storage) -> str:
    with storage.engine.connect() as conn:
        return conn.execute(sa.text("SHOW synchronous_commit")).scalar_one()


@pytest.mark.parametrize("patient", [True, False])
def test_the_tuners_sessions_commit_synchronously_on_a_server_that_does_not(pg_url, patient):
    server_default = sa.create_engine(pg_url.replace("postgresql://", "postgresql+psycopg2://", 1),
                                      poolclass=sa.pool.NullPool)
    try:
        with server_default.connect() as conn:
            assert conn.execute(sa.text("SHOW synchronous_commit")).scalar_one() == "off"  # as the test server runs
    finally:
        server_default.dispose()
    storage = open_storage(pg_url, patient=patient)
    try:
        assert session_setting(storage) == "on"
        storage.engine.dispose()  # a connection made later (after a restart, a pool refill) too
        assert session_setting(storage) == "on"
    finally:
        storage.engine.dispose()


def test_a_tell_acknowledged_just_before_an_immediate_restart_is_kept(pg_cluster, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "120")
    storage = open_storage(pg_cluster.database(), patient=True)
    try:
        study = optuna.create_study(study_name="kept", storage=storage, directions=["maximize"])
        told = []
        for value in range(3):
            trial = ask(study, DIST)
            tell(study, trial, [float(value)])
            told.append(trial._trial_id)
        pg_cluster._ctl("-m", "immediate", "-w", "-t", "60", "stop")  # the last commits a moment ago
        pg_cluster.start()
        fresh = optuna.storages.RDBStorage(storage.engine.url.render_as_string(hide_password=False))
        try:
            held = {t._trial_id: t for t in fresh.get_all_trials(study._study_id)}
        finally:
            fresh.engine.dispose()
        assert [held[i].state if i in held else None for i in told] == [TrialState.COMPLETE] * 3
    finally:
        storage.engine.dispose()
