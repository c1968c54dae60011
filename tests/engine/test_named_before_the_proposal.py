"""A trial names its worker before the sampler proposes its parameters.

Optuna's ``study.ask(distributions)`` proposes before it returns, and the tuner named the worker on
the trial only after: a worker killed during the proposal (seconds with the tuner's samplers) left a
RUNNING trial with no worker and no parameters, which a reaper fails only once it has seen it
unnamed for ``UNNAMED_AFTER_S``. A run that finds the budget spent ends at once, so such a trial
stayed RUNNING for good (QA, qa148: ``fault_campaign.py --random 10 --seed 9104``, draw 2, a group
kill of a worker between two launches: "trial 4 left RUNNING", its rerun "nothing left to
measure"). Now :func:`tuner.engine.workers.start_trial` asks, names the worker, and only then
proposes, so a kill there leaves a trial the next run of the host fails at once.

Real SQLite file; the sampler (Optuna's seam) reads the trial as the database holds it while it
proposes.
"""

from __future__ import annotations

from contextlib import ExitStack

import optuna
from optuna.storages import RDBStorage

from tuner.engine.storage import open_storage
from tuner.engine.workers import Worker, start_trial

DIST = {"x": optuna.distributions.IntDistribution(0, 9), "y": optuna.distributions.IntDistribution(0, 9)}


class Watching(optuna.samplers.RandomSampler):
    """A random sampler that notes, at each proposal, who the stored trial names as its worker."""

    def __init__(self, url: str):
        super().__init__(seed=1)
        self.url, self.seen = url, []

    def sample_independent(self, study, trial, param_name, param_distribution):
        fresh = RDBStorage(self.url)
        try:
            self.seen.append(fresh.get_trial(trial._trial_id).user_attrs.get("worker"))
        finally:
            fresh.engine.dispose()
        return super().sample_independent(study, trial, param_name, param_distribution)


def test_the_sampler_proposes_once_the_trial_names_its_worker(tmp_path):
    url = f"sqlite:///{tmp_path / 'named.db'}"
    storage = open_storage(url, patient=True)
    sampler = Watching(url)
    study = optuna.create_study(study_name="named", storage=storage, sampler=sampler)
    me = Worker().as_dict()
    try:
        with ExitStack() as stack:
            trial = start_trial(study, Worker(), stack, DIST)
            assert set(trial.params) == {"x", "y"}  # proposed all the same
        # before the fix: [None, None] (the proposal ran inside ask, before the name)
        assert sampler.seen == [me, me]
        # a queued trial: its parameters are the queued ones, proposed after the name too
        study.enqueue_trial({"x": 3, "y": 4})
        with ExitStack() as stack:
            queued = start_trial(study, Worker(), stack, DIST)
        assert queued.params == {"x": 3, "y": 4} and queued.user_attrs["worker"] == me
    finally:
        storage.engine.dispose()
