"""Why a worker stepped aside before its launch: the warning names the cause the database shows, and
blames a lost commit only where one is the cause.

Right before the launch the worker reads its trial back (TrialRunner._still_ours). Found failed with
its own name on it, the trial was failed by another worker's reaper, which judged this worker dead:
its heartbeat older than the grace period (the worker paused, or cut off from the database: another
host judges by the heartbeat), or, on a host of the same name that cannot see this process, by its
pid. The warning used to say, in every case, "the storage forgot this trial's start (a commit it
acknowledged, then lost): it is finished (FAIL) meanwhile". Back in the queue or started by another
worker, it is a lost commit (nothing else puts it there since the take of a queued trial is one
conditional UPDATE, tests/engine/test_queued_trial_taken_once.py), and the warning names what loses
commits on that kind of database.

Made on a real SQLite file with the model backend: at the ``launching`` point another worker's reaper
(this process stands in for it, on another host, or on one of the same name) fails the trial.
"""

from __future__ import annotations

import optuna
import pytest
import sqlalchemy as sa
from optuna.trial import TrialState
from support.lost_rows import SEED, counting_backend, seeded_study, warned

from tuner.engine import trial as trial_module
from tuner.engine import worker_identity, workers
from tuner.engine.runner import run_study
from tuner.engine.storage import open_storage
from tuner.engine.workers import lost_commit_causes, reap_dead_trials


def reap_as_another_worker(url: str, monkeypatch, by: str) -> None:
    """Another worker's reaper fails the one RUNNING trial: on another host (``by="heartbeat"``: it
    cannot ask for this process, and finds the trial's heartbeat an hour old), or on a host of this
    name that cannot see this process (``by="pid"``)."""
    storage = open_storage(url, patient=True)
    study = optuna.load_study(study_name="aside", storage=storage)
    try:
        with monkeypatch.context() as m:
            if by == "heartbeat":
                m.setattr(workers.Worker, "alive", staticmethod(lambda d: None))
            else:
                m.setattr(worker_identity, "process_alive", lambda pid, start: False)
            for _ in range(20):  # the worker's heartbeat thread may beat between the aging and the reap
                with storage.engine.begin() as conn:
                    conn.execute(sa.text("UPDATE trial_heartbeats SET heartbeat = datetime('now', '-1 hour')"))
                reap_dead_trials(study)
                if not study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
                    return
        raise AssertionError("the reaper never failed the running trial")
    finally:
        storage.engine.dispose()


def reap_at_launching(config, monkeypatch, by: str) -> list[str]:
    """Have another worker's reaper (:func:`reap_as_another_worker`) fail the trial once, at the
    worker's ``launching`` point; returns the list that says it did (``["reaped"]``)."""
    done: list[str] = []

    def at(name: str) -> None:
        if name == "launching" and not done:
            done.append("reaped")
            reap_as_another_worker(config.storage, monkeypatch, by)

    monkeypatch.setattr(trial_module, "kill_point", at)
    return done


@pytest.mark.parametrize("by, why", [
    ("heartbeat", "this worker's heartbeat was older than the grace period"),
    ("pid", "on a host of the same name it could not see this process"),
])
def test_a_trial_another_worker_failed_as_dead_is_not_blamed_on_a_lost_commit(tmp_path, monkeypatch, by, why):
    config = seeded_study(tmp_path, "aside")
    backend = counting_backend()
    done = reap_at_launching(config, monkeypatch, by)
    events = []
    run_study(config, config.storage, backend, on_event=lambda kind, info: events.append((kind, info)))
    assert done == ["reaped"]
    (aside,) = warned(events, "stepped aside")
    assert aside.startswith("another worker failed this trial as dead") and why in aside, aside
    assert "acknowledged" not in aside, aside  # before the fix: "the storage forgot this trial's start (a commit ..."
    assert backend.launches.count(SEED) == 1, backend.launches  # the retry the reaper queued, once
    trials = optuna.load_study(study_name=config.name, storage=config.storage).get_trials(deepcopy=False)
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]


def test_the_causes_of_a_lost_commit_are_those_of_the_storage(tmp_path, pg_url):
    sqlite = open_storage(f"sqlite:///{tmp_path / 'kind.db'}")
    postgres = open_storage(pg_url)
    try:
        assert lost_commit_causes(sqlite) == "the SQLite file put back from an older copy"
        assert "failover to a replica behind its primary" in lost_commit_causes(postgres)
        assert "SQLite" not in lost_commit_causes(postgres)
    finally:
        sqlite.engine.dispose()
        postgres.engine.dispose()


def held_trial(state: TrialState, worker: dict | None, status: str | None = None):
    attrs = {k: v for k, v in (("worker", worker), ("status", status)) if v is not None}
    return optuna.trial.create_trial(state=state, user_attrs=attrs,
                                     **({"values": [1.0]} if state == TrialState.COMPLETE else {}))


def test_every_reading_of_the_trial_names_its_own_cause(tmp_path):
    """Each state the read-back can find, read as the evidence says (TrialRunner._gone_why)."""
    from types import SimpleNamespace

    from tuner.engine.records import INTERRUPTED
    from tuner.engine.workers import Worker

    me, other = Worker(), Worker(start=-1)
    storage = open_storage(f"sqlite:///{tmp_path / 'why.db'}")
    runner = SimpleNamespace(storage=storage, worker=me)
    lost = "the storage forgot this trial's start (a commit it acknowledged, then lost: the SQLite file put back"
    why = {
        "queued": held_trial(TrialState.WAITING, me.as_dict()),
        "other's": held_trial(TrialState.RUNNING, other.as_dict()),
        "other's, finished": held_trial(TrialState.COMPLETE, other.as_dict()),
        "mine, complete": held_trial(TrialState.COMPLETE, me.as_dict()),
        "nobody's, failed": held_trial(TrialState.FAIL, None, INTERRUPTED),
        "mine, failed by pid": held_trial(TrialState.FAIL, me.as_dict(), INTERRUPTED),
        "mine, failed by heartbeat": held_trial(TrialState.FAIL, me.as_dict()),
    }
    said = {k: trial_module.TrialRunner._gone_why(runner, held) for k, held in why.items()}
    storage.engine.dispose()
    assert said["queued"].startswith(lost) and said["queued"].endswith("it is back in the queue")
    assert said["other's"].startswith(lost) and said["other's"].endswith("another worker started it")
    assert said["other's, finished"].endswith("another worker started it, and it is COMPLETE now")
    assert said["mine, complete"] == "this trial was finished (COMPLETE) by another process meanwhile"
    assert said["nobody's, failed"].startswith("the storage forgot this worker's name on this trial (a commit")
    assert "host of the same name" in said["mine, failed by pid"]
    assert "heartbeat was older than the grace period" in said["mine, failed by heartbeat"]
    for key in ("mine, complete", "mine, failed by pid", "mine, failed by heartbeat"):
        assert "acknowledged" not in said[key], said[key]  # no lost commit blamed where none shows
