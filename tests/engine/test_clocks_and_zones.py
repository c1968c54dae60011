"""Nodes whose clocks and time zones differ, sharing one study (README "Several nodes, one study").

* A trial's times written by the tuner's own conditional UPDATE (a queued trial started, a running
  one failed: :func:`tuner.engine.asktell.move_state`) are naive UTC in the column, as Optuna's own
  are: a worker with ``TZ=Europe/Berlin`` wrote its local time there, so a queued trial began an
  hour after it ended, and a retry after a commit that landed did not know its own write.
* A trial no worker named is failed after a reaper has *seen* it so for ``UNNAMED_AFTER_S`` by its
  own clock, not by its ``datetime_start`` (the asking node's clock): a node ahead by more than that
  failed live trials while their sampler proposed (the worker then stopped with
  ``UpdateFinishedTrialError``); a node behind left a dead worker's trial RUNNING.
* PostgreSQL sessions run in UTC: heartbeats are the database's ``now()`` as the session's wall
  time, and a worker whose session ran in another zone (``PGTZ``) had its live trial failed at once.

Real processes with their own ``TZ`` / ``PGTZ`` (POSIX zone rules need no tz database in Python),
forked from one that imported optuna and the tuner once (tests/support/zygote.py); a node's clock
behind or ahead is its trial's start written as that node writes it."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import optuna
import pytest
from optuna.trial import TrialState

from support.zygote import start_zygote
from tuner.engine import workers
from tuner.engine.storage import open_storage
from tuner.engine.workers import reap_dead_trials

#: Central European time (an hour east of UTC), as a POSIX rule
BERLIN = "CET-1CEST,M3.5.0,M10.5.0/3"

#: In a worker of zone ``TZ``: start a queued trial (the tuner's ask), tell it; fail a running one
#: as a reaper does; then move a third twice with one time, as a retry after a landed commit does.
#: time.tzset(): a fork of the zygote takes its ``TZ`` as a process started in the zone does at start-up.
WORKER = """
import json, sys, time, optuna
time.tzset()
from datetime import datetime, timezone
from optuna.distributions import FloatDistribution
from tuner.engine.asktell import ask, tell, _move_state
from tuner.engine.storage import open_storage
from tuner.engine.workers import fail_running
from optuna.trial import TrialState
optuna.logging.set_verbosity(optuna.logging.WARNING)
storage = open_storage(sys.argv[1])
study = optuna.create_study(study_name="zones", storage=storage)
study.enqueue_trial({"a": 1.0})
queued = ask(study, {"a": FloatDistribution(0, 2)})
tell(study, queued, 1.0)
reaped = study.ask()
fail_running(storage, reaped._trial_id)
study.enqueue_trial({"a": 0.5})
third = [t for t in study.get_trials() if t.state == TrialState.WAITING][0]._trial_id
at = datetime.now(timezone.utc).replace(tzinfo=None)
backend = getattr(storage, "_backend", storage)
first = _move_state(backend, third, TrialState.WAITING, TrialState.RUNNING, "datetime_start", at)
retry = _move_state(backend, third, TrialState.WAITING, TrialState.RUNNING, "datetime_start", at)
print(json.dumps({"first": first, "retry": retry}))
"""


BASE_ENV = {"PATH": "/usr/bin:/bin", "PYTHONWARNINGS": "ignore"}


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    """The workers are real processes of their own, forked from one that imported optuna, the tuner's
    storage and psycopg2 once: about a CPU second saved per worker."""
    z = start_zygote(["optuna", "psycopg2", "tuner.engine.asktell", "tuner.engine.storage", "tuner.engine.workers"],
                     BASE_ENV, tmp_path_factory.mktemp("zones-zygote"))
    yield z
    z.close()


def _python(zygote, cwd, code: str, env: dict, *args: str) -> str:
    """``python -c CODE ARGS`` with ``env`` (a zone), a fork of ``zygote`` in ``cwd``; its last line."""
    out = zygote.run(code, list(args), {**BASE_ENV, **env}, cwd, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_a_worker_in_another_zone_writes_start_and_end_in_order_and_knows_its_own_write(url, zygote, tmp_path):
    before = datetime.now(timezone.utc) - timedelta(seconds=1)
    moved = json.loads(_python(zygote, tmp_path, WORKER, {"TZ": BERLIN}, url))
    after = datetime.now(timezone.utc) + timedelta(seconds=1)
    # a retry after a commit that landed takes the move as its own (in Berlin it read an hour off)
    assert moved == {"first": True, "retry": True}
    study = optuna.load_study(study_name="zones", storage=open_storage(url))
    finished = [t for t in study.get_trials() if t.state in (TrialState.COMPLETE, TrialState.FAIL)]
    assert [t.state for t in finished] == [TrialState.COMPLETE, TrialState.FAIL]
    for t in finished:
        start, end = t.datetime_start.astimezone(timezone.utc), t.datetime_complete.astimezone(timezone.utc)
        # the instants this process lived through while the worker ran, in order (the queued trial
        # began an hour after it ended; the reaped one ended an hour after this test did)
        assert before <= start <= end <= after, (t.number, start, end)


def _unnamed_trial(study, started: datetime) -> int:
    """A RUNNING trial nobody named (its worker killed while the sampler proposed), started at
    ``started`` (aware) as its node's clock read then: Optuna keeps that as naive UTC."""
    import sqlalchemy as sa
    from optuna.storages._rdb import models
    from optuna.storages._rdb.storage import _create_scoped_session

    trial_id = study._storage.create_new_trial(study._study_id)
    table = models.TrialModel.__table__
    with _create_scoped_session(study._storage._backend.scoped_session, True) as session:
        session.execute(sa.update(table).where(table.c.trial_id == trial_id).values(
            datetime_start=started.astimezone(timezone.utc).replace(tzinfo=None)))
    return trial_id


def test_an_unnamed_trial_is_judged_by_how_long_this_reaper_saw_it_not_by_its_node_s_clock(url, monkeypatch):
    study = optuna.create_study(study_name="unnamed", storage=open_storage(url))
    now = datetime.now(timezone.utc)
    # a node 10 minutes behind is proposing right now: its trial looks 10 minutes old here
    proposing = _unnamed_trial(study, now - timedelta(minutes=10))
    assert reap_dead_trials(study) == []
    assert study._storage.get_trial(proposing).state == TrialState.RUNNING
    # a node 10 minutes ahead died while proposing: its trial looks as if from the future here
    dead = _unnamed_trial(study, now + timedelta(minutes=10))
    monkeypatch.setattr(workers, "UNNAMED_AFTER_S", 0.5)
    # the dead one first seen now (the proposing one may be reaped already: the call above first saw
    # it, on a loaded machine maybe more than 0.5 s ago)
    reaped: list[int] = reap_dead_trials(study)
    assert study._storage.get_trial(dead).number not in reaped
    deadline = time.monotonic() + 120
    while study._storage.get_trial(dead).state == TrialState.RUNNING and time.monotonic() < deadline:
        reaped += reap_dead_trials(study)
        time.sleep(0.2)
    assert sorted(reaped) == sorted(study._storage.get_trial(i).number for i in (proposing, dead))
    assert study._storage.get_trial(dead).user_attrs["status"] == "interrupted"


#: A worker of another host whose PostgreSQL session runs in ``PGTZ``: a trial of its own, named and
#: with a heartbeat (the tuner's start_trial), its last beat ``argv[2]`` seconds ago; the trial's id.
BEATING = """
import sys, optuna, sqlalchemy as sa
from tuner.engine.storage import open_storage
optuna.logging.set_verbosity(optuna.logging.WARNING)
storage = open_storage(sys.argv[1])
study = optuna.create_study(study_name="beats", storage=storage)
trial = study.ask()
trial.set_user_attr("worker", {"host": "node-b.invalid", "pid": 1, "start": 1})
storage.record_heartbeat(trial._trial_id)
with storage.engine.begin() as conn:
    conn.execute(sa.text("UPDATE trial_heartbeats SET heartbeat = heartbeat - make_interval(secs => :s) "
                         "WHERE trial_id = :t"), {"s": float(sys.argv[2]), "t": trial._trial_id})
print(trial._trial_id)
"""


@pytest.mark.parametrize("zone, beat_age_s, state", [
    # alive, its beat a moment old: in Los Angeles it read 8 hours old here, and the live trial failed
    ("America/Los_Angeles", 0, TrialState.RUNNING),
    # dead, its last beat past the grace: in Tokyo it read 9 hours ahead, and stayed RUNNING as long
    ("Asia/Tokyo", 2 * workers.HEARTBEAT_GRACE_S, TrialState.FAIL),
])
def test_a_heartbeat_written_in_another_session_zone_is_judged_by_its_age(pg_url, zone, beat_age_s, state, zygote,
                                                                          tmp_path):
    trial_id = int(_python(zygote, tmp_path, BEATING, {"PGTZ": zone}, pg_url, str(beat_age_s)))
    study = optuna.load_study(study_name="beats", storage=open_storage(pg_url))
    reap_dead_trials(study)  # this session's zone: the server's (UTC here)
    assert study._storage.get_trial(trial_id).state == state
