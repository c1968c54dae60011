"""Faults the fault campaign's random mode (benchmarks/random_faults.py) met at moments nobody had
planned for, each reproduced here at that exact moment on the real storage.

* A trial the storage had just created is gone the moment after: ``pg_ctl restart -m immediate``
  right after the INSERT of ``study.ask`` committed, on a server whose commits are asynchronous
  (``synchronous_commit = off``, as ``.ci/postgres.sh`` runs it and as a tuned production server
  may; a failover to a replica behind the primary does the same). The worker's next write to it
  raised Optuna's ``KeyError: 'Record does not exist.'`` out of the sampler, and the worker died
  with a traceback (QA, random mode seed 2, draw 2). The database lost the commit, not the worker:
  the worker asks again.
"""

from __future__ import annotations

import threading
import time
from contextlib import ExitStack

import optuna
import pytest
import sqlalchemy as sa
from optuna.trial import TrialState

from tuner.engine import workers
from tuner.engine.storage import open_storage
from tuner.engine.workers import Worker, start_trial

DIST = {"x": optuna.distributions.IntDistribution(0, 9)}


@pytest.fixture
def study(tmp_path):
    storage = open_storage(f"sqlite:///{tmp_path / 'lost.db'}", patient=True)
    yield optuna.create_study(study_name="lost", storage=storage, directions=["maximize"])
    storage.engine.dispose()


def stored(study) -> list:
    """The study's trials as the database holds them (a fresh storage: no worker's cache)."""
    fresh = optuna.storages.RDBStorage(str(study._storage._backend.engine.url))
    try:
        return optuna.load_study(study_name=study.study_name, storage=fresh).get_trials(deepcopy=False)
    finally:
        fresh.engine.dispose()


def lose_the_commits_of(backend, n: int) -> list[int]:
    """The next ``n`` trials ``backend`` creates vanish right after their commit (what an immediate
    restart does to a commit the server had not written yet); returns their ids, as they go."""
    lost: list[int] = []
    create = type(backend)._create_new_trial  # what Optuna's cache calls (its ask: create_new_trial)

    def create_then_lose(self, study_id, template_trial=None):
        frozen = create(self, study_id, template_trial)
        trial_id = frozen._trial_id
        if len(lost) < n:
            lost.append(trial_id)
            with self.engine.begin() as conn:
                for table in ("trial_params", "trial_system_attributes", "trial_user_attributes",
                              "trial_heartbeats"):
                    conn.execute(sa.text(f"DELETE FROM {table} WHERE trial_id = :t"), {"t": trial_id})
                conn.execute(sa.text("DELETE FROM trials WHERE trial_id = :t"), {"t": trial_id})
        return frozen

    backend._create_new_trial = create_then_lose.__get__(backend)
    return lost


def test_a_trial_the_storage_lost_right_after_creating_it_is_asked_again(study):
    lost = lose_the_commits_of(study._storage._backend, 1)
    with ExitStack() as stack:
        trial = start_trial(study, Worker(), stack, DIST)
        assert len(lost) == 1
        (held,) = stored(study)  # the one trial, asked again, in the database and named
        assert (held._trial_id, held.state) == (trial._trial_id, TrialState.RUNNING)
        assert held.user_attrs["worker"] == Worker().as_dict() and "x" in held.params


def test_a_storage_that_keeps_losing_the_new_trial_is_not_asked_forever(study):
    """Past a few tries the error is the storage's, and goes out as before (a study deleted under
    the worker raises the same KeyError, and the run says so: tuner.cli.study)."""
    lost = lose_the_commits_of(study._storage._backend, 100)
    with ExitStack() as stack, pytest.raises(KeyError):
        start_trial(study, Worker(), stack, DIST)
    assert len(lost) == workers.ASK_TRIES
    assert stored(study) == []


# -- the heartbeat thread on an SQLite file another process holds locked ----------------------------

def beat_of(db, trial_id: int):
    import sqlite3

    conn = sqlite3.connect(db, timeout=60)
    try:
        row = conn.execute("SELECT heartbeat FROM trial_heartbeats WHERE trial_id = ?", (trial_id,)).fetchone()
    finally:
        conn.close()
    return row and row[0]


def test_the_heartbeat_on_a_held_sqlite_lock_waits_alone_and_beats_again(tmp_path, monkeypatch):
    """Left open by an earlier QA round: the heartbeat thread while another process holds SQLite's
    write lock. Its beat waits out one busy timeout (in that thread alone), fails, and is tried again
    a second later, without end: the thread neither dies nor raises. Its trial is never judged dead
    meanwhile: SQLite's workers share one host, where a worker is judged by its pid. Once the lock is
    gone a beat lands again."""
    import sqlite3

    monkeypatch.setattr(workers, "HEARTBEAT_INTERVAL_S", 0.2)
    monkeypatch.setattr("tuner.engine.storage.SQLITE_TIMEOUT_S", 1)
    db = tmp_path / "held.db"
    storage = open_storage(f"sqlite:///{db}", patient=True)
    study = optuna.create_study(study_name="held", storage=storage, directions=["maximize"])
    try:
        with ExitStack() as stack:
            # a heartbeat of an earlier test in this process may still be finishing a beat its
            # trial's end waited 5 s for (Heartbeat.__exit__), under the same name when its trial
            # had the same id in another database: this trial's is the one started here
            before = set(threading.enumerate())
            trial = start_trial(study, Worker(), stack, DIST)
            (beat,) = [t for t in set(threading.enumerate()) - before if t.name == f"heartbeat-{trial._trial_id}"]
            first = beat_of(db, trial._trial_id)
            holder = sqlite3.connect(db, timeout=60, isolation_level=None)
            holder.execute("BEGIN EXCLUSIVE")
            try:
                backend = study._storage._backend
                deadline = time.monotonic() + 120
                while not backend.recently_unreachable(60) and time.monotonic() < deadline:
                    time.sleep(0.1)
                assert backend.recently_unreachable(60), "no beat ever met the lock"
                assert beat.is_alive()
            finally:
                holder.execute("COMMIT")
                holder.close()
            assert workers.reap_dead_trials(study) == []  # a live worker of this host: not dead
            deadline = time.monotonic() + 120
            while beat_of(db, trial._trial_id) == first and time.monotonic() < deadline:
                time.sleep(0.1)
            assert beat_of(db, trial._trial_id) != first, "no beat landed once the lock was gone"
            assert beat.is_alive()
        assert study.get_trials(deepcopy=False)[0].state == TrialState.RUNNING
    finally:
        storage.engine.dispose()
