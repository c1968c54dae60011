"""A queued (WAITING) trial whose start the database forgot: the worker runs it while the database
holds it WAITING again, and a second worker may take it from the queue and run it too.

Optuna starts a queued trial with one UPDATE (``_pop_waiting_trial_id``: WAITING to RUNNING, refused
when no longer WAITING). PostgreSQL with ``synchronous_commit = off`` restarted at once forgets that
commit and what followed it (the worker's name and first heartbeat); the worker, told RUNNING, goes
on, and its later writes land on a WAITING trial (Optuna allows them). Made here on a real SQLite
file by putting the rows back as they were before the start, at the ``asked`` point
(:mod:`tuner.engine.killpoints`), then letting a second worker of the study run one trial while the
first one is about to launch.

Before the fix both launched the same setting under the same trial (QA, qa79: two measurements of one
queued setting, the second re-homed as a copy). Now a worker reads its trial back from the database
right before the launch: still RUNNING and its own, it launches; back in the queue, another worker's,
or finished, it steps aside without a write to it (the queue or the other worker has it).
"""

from __future__ import annotations

import optuna
import sqlalchemy as sa
from optuna.trial import TrialState
from support.lost_rows import SEED, counting_backend, seeded_study, warned

from tuner.engine import runner as runner_module
from tuner.engine import trial as trial_module
from tuner.engine.runner import run_study
from tuner.engine.workers import Worker

def forget_the_start(url: str) -> int:
    """Put the one RUNNING trial back as the queue held it (WAITING, unnamed, no heartbeat): the
    commits of its start lost. Returns its id."""
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            (trial_id,) = [r[0] for r in conn.execute(sa.text("SELECT trial_id FROM trials WHERE state = 'RUNNING'"))]
            conn.execute(sa.text("UPDATE trials SET state = 'WAITING', datetime_start = NULL WHERE trial_id = :t"),
                         {"t": trial_id})
            conn.execute(sa.text("DELETE FROM trial_user_attributes WHERE trial_id = :t AND key = 'worker'"),
                         {"t": trial_id})
            conn.execute(sa.text("DELETE FROM trial_heartbeats WHERE trial_id = :t"), {"t": trial_id})
    finally:
        engine.dispose()
    return trial_id


def test_a_queued_trial_whose_start_was_forgotten_is_launched_once(tmp_path, monkeypatch):
    config = seeded_study(tmp_path, "popped")
    backend = counting_backend()
    done: list[str] = []
    other = Worker(start=-1)  # another worker (this process stands in for it; its id is its own)

    def at(name: str) -> None:
        if name == "asked" and not done:
            done.append("forgotten")
            forget_the_start(config.storage)
        elif name == "launching" and done == ["forgotten"]:
            done.append("other worker ran one trial")
            with monkeypatch.context() as m:
                m.setattr(runner_module, "Worker", lambda: other)
                run_study(config, config.storage, backend, n_trials=1)

    monkeypatch.setattr(trial_module, "kill_point", at)
    events = []
    run_study(config, config.storage, backend, on_event=lambda kind, info: events.append((kind, info)))
    assert done == ["forgotten", "other worker ran one trial"]
    assert backend.launches.count(SEED) == 1, backend.launches  # before the fix: 2, one per worker
    study = optuna.load_study(study_name=config.name, storage=config.storage)
    trials = study.get_trials(deepcopy=False)
    assert [t.state for t in trials].count(TrialState.RUNNING) == 0
    assert [t.state for t in trials].count(TrialState.WAITING) == 0
    seeded = [t for t in trials if t.params == SEED]
    assert len(seeded) == 1 and seeded[0].state == TrialState.COMPLETE
    assert seeded[0].user_attrs["worker"] == other.as_dict()  # the other worker's measurement, kept once
    (aside,) = warned(events, "stepped aside")
    assert "another worker started it, and it is COMPLETE now" in aside and "older copy" in aside, aside


def test_alone_the_worker_finds_its_trial_back_in_the_queue_and_starts_it_again(tmp_path, monkeypatch):
    """No other worker: the trial is back in the queue at the launch; this worker steps aside and
    its next ask starts it again, properly RUNNING and named. Launched once, nothing left queued."""
    config = seeded_study(tmp_path, "popped")
    backend = counting_backend()
    forgotten: list[int] = []

    def at(name: str) -> None:
        if name == "asked" and not forgotten:
            forgotten.append(forget_the_start(config.storage))

    monkeypatch.setattr(trial_module, "kill_point", at)
    events = []
    run_study(config, config.storage, backend, on_event=lambda kind, info: events.append((kind, info)))
    assert forgotten and backend.launches.count(SEED) == 1
    trials = optuna.load_study(study_name=config.name, storage=config.storage).get_trials(deepcopy=False)
    (seeded,) = [t for t in trials if t.params == SEED]
    assert seeded._trial_id == forgotten[0] and seeded.state == TrialState.COMPLETE
    assert seeded.datetime_start is not None and seeded.user_attrs["worker"] == Worker().as_dict()
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]
    (aside,) = warned(events, "stepped aside")
    assert "back in the queue" in aside and "the SQLite file put back from an older copy" in aside, aside
