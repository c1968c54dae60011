"""A worker whose trial another worker failed as dead before its launch (this worker paused, or cut
off from the database, past the heartbeat grace, anywhere between its ask and its ``launching``
mark) steps aside when it wakes, saying why, and goes on: the reaper queued the setting, which is
launched once.

It used to stop with ``UpdateFinishedTrialError`` from its next write to the trial (the
``requested`` setting, a claim, the ``launching`` mark): QA, qa111, three real ``tuner study run``
workers on one PostgreSQL study, one of them (on another host) stopped with SIGSTOP between its ask
and its launch for twice the grace period; it exited 1 with that traceback. Only the check right
before the launch (TrialRunner._still_ours) and the give-up for want of a slot
(tests/engine/test_abandon_after_reaped.py) stepped aside. Made on a real SQLite file with the
model backend: at the named point another worker's reaper (this process stands in for it, on
another host) fails the trial.

The same before the worker named itself on its trial: a reaper fails a trial it has seen unnamed for
``UNNAMED_AFTER_S`` (the worker paused, or cut off, while its sampler proposed); the worker's name
then raised the same error out of it. It asks for a trial again (tuner.engine.workers.start_trial).
"""

from __future__ import annotations

import optuna
import pytest
from optuna.trial import TrialState
from support.lost_rows import SEED, counting_backend, seeded_study, warned
from test_stepped_aside_why import reap_as_another_worker

from tuner.engine import trial as trial_module
from tuner.engine import workers
from tuner.engine.runner import run_study
from tuner.engine.storage import open_storage


@pytest.mark.parametrize("point", ["asked", "claimed"])
def test_a_trial_reaped_before_its_launch_is_stepped_away_from(tmp_path, monkeypatch, point):
    config = seeded_study(tmp_path, "aside")
    backend = counting_backend()
    done: list[str] = []

    def at(name: str) -> None:
        if name == point and not done:
            done.append("reaped")
            reap_as_another_worker(config.storage, monkeypatch, "heartbeat")

    monkeypatch.setattr(trial_module, "kill_point", at)
    events = []
    summary = run_study(config, config.storage, backend, on_event=lambda kind, info: events.append((kind, info)))
    assert done == ["reaped"]
    (aside,) = warned(events, "stepped aside")
    assert aside.startswith("another worker failed this trial as dead"), aside
    trials = optuna.load_study(study_name=config.name, storage=config.storage).get_trials(deepcopy=False)
    first = trials[0]
    assert first.state == TrialState.FAIL and first.params == SEED
    # the setting queued once, by the reaper, and launched once, from that queue
    retries = [t for t in trials if t.user_attrs.get("retry_of") == first.number]
    assert len(retries) == 1 and retries[0].state == TrialState.COMPLETE, [t.state for t in retries]
    assert backend.launches.count(SEED) == 1, backend.launches
    # the budget spent by launches, the reaped trial not among them
    assert summary.launches == len(backend.launches) == 3
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]


def test_a_trial_failed_as_nobodys_before_its_worker_named_itself_is_asked_for_again(tmp_path, monkeypatch):
    config = seeded_study(tmp_path, "aside")
    backend = counting_backend()
    real_ask = workers.ask
    done: list[int] = []

    def ask(study, distributions=None):
        trial = real_ask(study, distributions)
        if not done and study.study_name == config.name:  # a reaper that saw it unnamed too long
            done.append(trial.number)
            storage = open_storage(config.storage, patient=True)
            try:
                other = optuna.load_study(study_name=config.name, storage=storage)
                assert workers.interrupt(other, trial._trial_id, "its worker died", workers.MAX_RETRY)
            finally:
                storage.engine.dispose()
        return trial

    monkeypatch.setattr(workers, "ask", ask)
    summary = run_study(config, config.storage, backend)
    assert done == [0]
    trials = optuna.load_study(study_name=config.name, storage=config.storage).get_trials(deepcopy=False)
    # failed before its sampler proposed (the worker names itself first): its parameters are the
    # ones it was queued with, which the reaper queued again
    assert trials[0].state == TrialState.FAIL and trials[0].system_attrs.get("fixed_params") == SEED
    assert "worker" not in trials[0].user_attrs  # left as the reaper failed it
    assert backend.launches.count(SEED) == 1, backend.launches  # the reaper's retry, launched once
    assert summary.launches == len(backend.launches) == 3
    assert not [t for t in trials if t.state in (TrialState.RUNNING, TrialState.WAITING)]
