"""The database's clock stepped (NTP, ``date -s`` on the server) while workers of several hosts run.

Optuna judges heartbeats by the database's ``now()`` alone, at the beat and at the reaper's look.
Stepped forward by an hour, every live worker's last beat read an hour old until its next beat, and
a reaper that looked in those seconds failed another host's live trial (QA, qa168: PostgreSQL under
libfaketime stepped +3600 s, its trial FAIL). The reaper now notices the step
(:class:`tuner.engine.db_clock.DatabaseClock`) and judges no heartbeat until every live worker has
beaten on the new clock; a dead worker's trial is still failed after that.

The clock under test is the database's: a real PostgreSQL whose ``now()`` is the server's own plus a
shift the test steps (a function ``public.now()`` found before ``pg_catalog``'s by the database's
``search_path``: every session's ``now()``, Optuna's heartbeats and stale checks included). Real
heartbeat thread, real reaper, in-process (the process is not under test).
"""

from __future__ import annotations

import time
from contextlib import ExitStack

import optuna
import sqlalchemy as sa
from optuna.trial import TrialState

from tuner.engine import db_clock
from tuner.engine.storage import driver_url, open_storage
from tuner.engine.workers import Worker, reap_dead_trials, start_trial


def _clock_that_steps(url: str):
    """Give the database at ``url`` a ``now()`` of the server's clock plus a shift; returns a function
    that sets the shift (seconds)."""
    engine = sa.create_engine(driver_url(url), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    with engine.connect() as conn:
        conn.execute(sa.text("CREATE TABLE clock_shift (s double precision NOT NULL)"))
        conn.execute(sa.text("INSERT INTO clock_shift VALUES (0)"))
        conn.execute(sa.text(
            "CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE sql STABLE AS "
            "$$ SELECT pg_catalog.now() + make_interval(secs => (SELECT s FROM public.clock_shift)) $$"))
        database = conn.engine.url.database
        conn.execute(sa.text(f"ALTER DATABASE {database} SET search_path = public, pg_catalog"))

    def step(seconds: float) -> None:
        with engine.connect() as conn:
            conn.execute(sa.text("UPDATE clock_shift SET s = :s"), {"s": seconds})
    return step


def test_a_forward_step_of_the_database_clock_spares_a_live_trial_then_a_dead_one_fails(pg_url, monkeypatch):
    step = _clock_that_steps(pg_url)
    # the quiet after a step: one second here (grace + interval by default), so the test ends soon
    monkeypatch.setattr(db_clock, "HEARTBEAT_GRACE_S", 0.5)
    monkeypatch.setattr(db_clock, "HEARTBEAT_INTERVAL_S", 0.5)
    worker_study = optuna.create_study(study_name="steps", storage=open_storage(pg_url))
    reaper = optuna.load_study(study_name="steps", storage=open_storage(pg_url))
    with ExitStack() as stack:
        # a worker of another host (its pid means nothing here): judged by its heartbeat alone
        trial = start_trial(worker_study, Worker(host="node-b.invalid", pid=1, start=1), stack)
        reap_dead_trials(reaper)  # a look before the step: the clock's reference
        assert reaper._storage.get_trial(trial._trial_id).state == TrialState.RUNNING
        step(3600)  # NTP steps the database server's clock an hour forward
        reap_dead_trials(reaper)
        # its last beat reads an hour old on the new clock; its worker beats on (every 10 s)
        assert reaper._storage.get_trial(trial._trial_id).state == TrialState.RUNNING
    # the worker dies (its heartbeat stops, its trial RUNNING): once the quiet has passed it is failed
    time.sleep(1.1)
    reap_dead_trials(reaper)
    assert reaper._storage.get_trial(trial._trial_id).state == TrialState.FAIL


def test_a_dead_worker_s_trial_is_failed_after_the_database_clock_was_stepped_back(pg_url, monkeypatch):
    step = _clock_that_steps(pg_url)
    monkeypatch.setattr(db_clock, "HEARTBEAT_GRACE_S", 0.5)
    monkeypatch.setattr(db_clock, "HEARTBEAT_INTERVAL_S", 0.5)
    worker_study = optuna.create_study(study_name="steps", storage=open_storage(pg_url))
    reaper = optuna.load_study(study_name="steps", storage=open_storage(pg_url))
    with ExitStack() as stack:
        trial = start_trial(worker_study, Worker(host="node-b.invalid", pid=1, start=1), stack)
        reap_dead_trials(reaper)  # a look before the step: the clock's reference
    # the worker dies (its heartbeat stops, its trial RUNNING); then NTP steps the server an hour back
    step(-3600)
    reap_dead_trials(reaper)  # the step seen: the quiet begins (a live worker would beat meanwhile)
    time.sleep(1.1)
    reap_dead_trials(reaper)
    # its last beat lies an hour ahead of the clock: it used to stay RUNNING for that hour
    assert reaper._storage.get_trial(trial._trial_id).state == TrialState.FAIL


def test_a_first_look_right_after_a_backward_step_does_not_fail_a_live_trial(pg_url):
    step = _clock_that_steps(pg_url)
    worker_study = optuna.create_study(study_name="steps", storage=open_storage(pg_url))
    with ExitStack() as stack:
        trial = start_trial(worker_study, Worker(host="node-b.invalid", pid=1, start=1), stack)
        step(-3600)  # its beat now lies an hour ahead until its next one (every 10 s)
        # a worker that starts now: its first look cannot tell a beat written before a step it did not
        # see from a dead worker's; it leaves such beats be until it has watched the clock a while
        reaper = optuna.load_study(study_name="steps", storage=open_storage(pg_url))
        reap_dead_trials(reaper)
        assert reaper._storage.get_trial(trial._trial_id).state == TrialState.RUNNING
