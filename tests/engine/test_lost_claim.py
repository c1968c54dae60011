"""A worker's claim on a setting that the database forgot (the one commit lost: a failover to a
replica behind the primary, an SQLite file put back from a copy taken a moment before) while the
worker goes on to its launch: another worker finds the setting unclaimed, claims and measures it,
and the first launched it too (QA, qa79: one effective setting measured twice at once, the claim
being what keeps two workers off one setting, tuner.engine.workers.try_claim).

Now the worker's read-back right before the launch (TrialRunner._still_ours) checks its claim too:
gone, the worker claims again as it did the first time, looking once more for a measurement of the
setting, and reuses the other worker's. Made on a real SQLite file: the claim's row deleted at the
``launching`` point, the second worker run one trial there.
"""

from __future__ import annotations

from support.lost_rows import CountingBackend, forget_running_attr, warned
from support.model_study import REUSE_SEED, model_study_yaml

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine import runner as runner_module
from tuner.engine import trial as trial_module
from tuner.engine.records import REUSED, load_records
from tuner.engine.runner import run_study
from tuner.engine.study import create_study
from tuner.engine.workers import Worker

#: what SGLang runs the first two seeds of REUSE_SEED as, (1, 1, 3) and (1, 1, 5) alike
BOTH = {"speculative_num_steps": 1, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 2}


def test_a_claim_the_database_forgot_is_made_again_before_the_launch(tmp_path, monkeypatch):
    path = tmp_path / "claim.yaml"
    path.write_text(model_study_yaml("claim", f"sqlite:///{tmp_path / 'claim.db'}", 3, noise=0.01, seed=1)
                    + "default_seed_trials: false\n" + REUSE_SEED)
    config = load_study(path)
    create_study(config, config.storage)
    backend = CountingBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1)
    backend.launches = []
    done: list[str] = []

    def at(name: str) -> None:
        if name == "launching" and not done:
            done.append("claim forgotten")
            forget_running_attr(config.storage, "claim")
            with monkeypatch.context() as m:  # another worker (this process stands in for it)
                m.setattr(runner_module, "Worker", lambda: Worker(start=-1))
                run_study(config, config.storage, backend, n_trials=1)

    monkeypatch.setattr(trial_module, "kill_point", at)
    events = []
    run_study(config, config.storage, backend, on_event=lambda kind, info: events.append((kind, info)))
    assert done == ["claim forgotten"]
    (again,) = warned(events, "claimed and counted again")
    assert "the SQLite file put back from an older copy" in again, again
    assert backend.launches.count(BOTH) == 1, backend.launches  # before the fix: 2, one per worker
    import optuna

    records = load_records(optuna.load_study(study_name=config.name, storage=config.storage))
    same = [r for r in records if r.attrs.get("effective_key") == "1-1-2"]
    assert sorted(r.status for r in same) == sorted(["measured", REUSED]), [(r.number, r.status) for r in same]


def test_a_claim_forgotten_at_every_try_launches_nothing(tmp_path, monkeypatch):
    """The read-back finding the claim gone again and again (a storage that forgets every commit)
    ends after a bounded number of claims: the trial steps back (abandoned, its setting queued
    again), nothing launched. Before the bound the worker claimed for ever."""
    import optuna

    from tuner.engine.baseline import find_baseline
    from tuner.engine.study import config_from_study

    path = tmp_path / "unsteady.yaml"
    path.write_text(model_study_yaml("unsteady", f"sqlite:///{tmp_path / 'unsteady.db'}", 1, noise=0.01, seed=1))
    config = load_study(path)
    create_study(config, config.storage)
    backend = CountingBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1)
    backend.launches = []
    run_study(config, config.storage, backend, n_trials=0)  # the baseline alone
    assert backend.launches == []
    looks: list[int] = []

    def forgotten(self, trial):
        looks.append(trial.number)
        assert len(looks) <= 10, "claimed again without end"
        return False

    monkeypatch.setattr(trial_module.TrialRunner, "_still_ours", forgotten)
    study = optuna.load_study(study_name=config.name, storage=config.storage)
    _, space, _ = config_from_study(study)
    trials = trial_module.TrialRunner(config, study, space, backend, Worker(), lambda kind, info: None)
    assert trials.run_one(find_baseline(study)) == trial_module.ABANDONED
    assert len(looks) == trial_module.ASK_TRIES and backend.launches == [], (looks, backend.launches)
