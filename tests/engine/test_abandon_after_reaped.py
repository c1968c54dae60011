"""A worker that finds no budget slot left gives its trial up (TrialRunner._abandon): when another
worker's reaper failed that trial meanwhile (this worker judged dead: paused past the heartbeat
grace), the reaper queued its setting and the worker leaves the trial be, nothing raised.

_abandon used to write its marks, queue the setting and ``tell`` FAIL: on a trial already failed the
first write raised ``UpdateFinishedTrialError`` out of the worker (qa93 noted the shape; the
interrupt and the reaper were made one conditional UPDATE there, tests/engine/
test_interrupt_and_reaper_once.py). Made on a real SQLite file with the model backend: at the
``launching`` point another worker's reaper (this process stands in for it, on another host) fails
the trial, and the study's last slot is taken meanwhile (the count of finished launches says the
budget is spent).
"""

from __future__ import annotations

import optuna
from optuna.trial import TrialState
from support.lost_rows import SEED, counting_backend, seeded_study
from test_stepped_aside_why import reap_at_launching

from tuner.engine import trial as trial_module
from tuner.engine.runner import run_study


def test_a_trial_reaped_before_it_gives_up_its_slot_is_left_to_the_reaper(tmp_path, monkeypatch):
    config = seeded_study(tmp_path, "aside")
    backend = counting_backend()
    done = reap_at_launching(config, monkeypatch, "heartbeat")
    spent = trial_module.TrialRunner.launched_in_study

    def launched(self, records=None):
        # the budget's last slots taken by other workers while this one was judged dead
        return 10**6 if done == ["reaped"] and not backend.launches else spent(self, records)

    monkeypatch.setattr(trial_module.TrialRunner, "launched_in_study", launched)
    events = []
    run_study(config, config.storage, backend, on_event=lambda kind, info: events.append((kind, info)))
    assert done == ["reaped"]
    study = optuna.load_study(study_name=config.name, storage=config.storage)
    trials = study.get_trials(deepcopy=False)
    # the trial failed once (by the reaper), its setting queued once (by the reaper), nothing launched
    assert [(t.state, t.params) for t in trials] == [(TrialState.FAIL, SEED), (TrialState.WAITING, SEED)]
    assert not [kind for kind, _ in events if kind == "error"]
    assert backend.launches == []
    # and it says why it gave the trial up (it said nothing of it: qa223, a worker of another node
    # frozen at its launching mark past the heartbeat grace, on PostgreSQL)
    said = [info["message"] for kind, info in events if kind == "warning" and info.get("trial") == trials[0].number]
    assert len(said) == 1 and said[0].startswith("another worker failed this trial as dead: this worker's "
                                                 "heartbeat was older than the grace period"), said
    assert said[0].endswith("; this worker stepped aside"), said
