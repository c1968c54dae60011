"""A worker's ``launching`` mark that the database forgot (the one commit lost: a failover to a
replica behind the primary, an SQLite file put back from a copy taken a moment before): the mark is
how the other workers count a launch in flight against the study's budget
(TrialRunner._budget_allows). Forgotten, a second worker took the last slot too and the study ended
one launch past its budget (QA, qa79).

Now the read-back right before the launch (TrialRunner._still_ours) checks the mark as it checks
the claim: gone, the worker marks and counts again, and steps back when the budget is spent. Made
on a real SQLite file: the mark's row deleted once the worker has marked and counted, a second
worker run one trial there, the budget one launch.
"""

from __future__ import annotations

import optuna
from support.lost_rows import CountingBackend, forget_running_attr
from support.model_study import model_study_yaml

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine import runner as runner_module
from tuner.engine import trial as trial_module
from tuner.engine.records import launched, load_records
from tuner.engine.runner import run_study
from tuner.engine.study import create_study
from tuner.engine.workers import Worker


def test_a_launching_mark_the_database_forgot_is_made_again_and_the_budget_holds(tmp_path, monkeypatch):
    path = tmp_path / "mark.yaml"
    path.write_text(model_study_yaml("mark", f"sqlite:///{tmp_path / 'mark.db'}", 1, noise=0.01, seed=1)
                    + "default_seed_trials: false\n")
    config = load_study(path)
    create_study(config, config.storage)
    backend = CountingBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1)
    backend.launches = []
    done: list[str] = []

    allows = trial_module.TrialRunner._budget_allows

    def allows_then_forgotten(self, trial) -> bool:
        # after this worker marked and counted (the slot was free), before its launch
        ok = allows(self, trial)
        if ok and not done:
            done.append("mark forgotten")
            forget_running_attr(config.storage, "launching")
            with monkeypatch.context() as m:  # another worker (this process stands in for it)
                m.setattr(runner_module, "Worker", lambda: Worker(start=-1))
                run_study(config, config.storage, backend, n_trials=1)
        return ok

    monkeypatch.setattr(trial_module.TrialRunner, "_budget_allows", allows_then_forgotten)
    run_study(config, config.storage, backend)
    assert done == ["mark forgotten"]
    assert len(backend.launches) == 1, backend.launches  # before the fix: 2, past the budget of 1
    records = load_records(optuna.load_study(study_name=config.name, storage=config.storage))
    assert sum(launched(r.status, r.attrs) for r in records) == 1


def test_a_study_with_no_budget_marks_nothing_and_launches(tmp_path):
    """No budget (``n_trials: null``): no launching mark is written, and the read-back does not take
    its absence for a mark forgotten (it would claim and count again without end)."""
    path = tmp_path / "open.yaml"
    path.write_text(model_study_yaml("open", f"sqlite:///{tmp_path / 'open.db'}", 1, noise=0.01, seed=1)
                    .replace("budget: {n_trials: 1}", "budget: {n_trials: null}") + "default_seed_trials: false\n")
    config = load_study(path)
    assert config.budget.n_trials is None
    create_study(config, config.storage)
    backend = CountingBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1)
    backend.launches = []
    summary = run_study(config, config.storage, backend, n_trials=2)
    assert summary.launches == 2 and len(backend.launches) == 2
