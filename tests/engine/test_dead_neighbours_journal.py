"""A worker that finds, mid-run, the trial of a worker of this host that died during its tell
(its measurement journaled, the trial not yet told) stores that measurement from the journal before
it judges the trial dead: the trial is told with it, its setting is not queued again, and no
launch of the budget goes to measuring it a second time.

It used to fail the trial at once (its worker's pid gone) and queue the setting, which it then
launched again; the journal was read only when a run started, so the first measurement came back
only with the next run on the host, as a second trial of the same setting, one launch past the
budget (QA, qa111: three real `tuner study run` workers on one PostgreSQL study, one killed with
kill -9 after journaling its second measurement, a budget of 8: the setting launched twice, 9
launches counted once a worker started there again). Made on a real SQLite file with the model
backend: after this worker's first tell, a worker of this host (a pid that is not there) is
left holding a RUNNING trial whose measurement waits in the journal.

The same for the baseline: a worker waiting for the baseline another worker of its host measures
used to fail that worker's baseline trial when it died during its tell, and measure the baseline
again; the journaled one, re-homed by the next run there, then became the study's latest baseline,
not the one every trial had been judged against (QA, qa111, TUNER_TEST_KILL_AT=baseline.figures:
two baselines launched, C=32 592 and 463 tok/s on a loaded machine, the second shown after the
next run).
"""

from __future__ import annotations

import optuna
from optuna.trial import TrialState
from support.faults import ROOT
from support.lost_rows import counting_backend, seeded_study

from tuner.config.space import SearchSpace
from tuner.engine import finish as finish_module
from tuner.engine.asktell import ask
from tuner.engine.baseline import baseline_values, create_baseline_study, find_baseline
from tuner.engine.finish import finish_of
from tuner.engine.outcome import baseline_attrs
from tuner.engine.pruning import baseline_stage_attrs
from tuner.engine.journal import Journal
from tuner.engine.runner import run_study
from tuner.engine.storage import open_storage, storage_label
from tuner.engine.study import UID_ATTR, open_study
from tuner.engine.workers import Worker

#: the dead worker's setting (valid, and not the seed the study queues)
DEAD = {"speculative_num_steps": 5, "speculative_eagle_topk": 8, "speculative_num_draft_tokens": 32}


def leave_a_dead_workers_journaled_trial(config) -> int:
    """What a worker of this host killed right after journaling its measurement leaves: a RUNNING
    trial of :data:`DEAD` in its name (launching, its claim held), and its journal entry. Returns
    the trial's number."""
    storage = open_storage(config.storage)
    try:
        study = optuna.load_study(study_name=config.name, storage=storage)
        study.enqueue_trial(DEAD)
        trial = ask(study, SearchSpace.load(ROOT / "search_spaces" / "eagle3.yaml").distributions())
        assert trial.params == DEAD
        dead = {**Worker().as_dict(), "pid": 2 ** 22 + 7}  # this host, a process that is not there
        key = "5-8-32"
        effective = {"num_steps": 5, "eagle_topk": 8, "num_draft_tokens": 32}
        for k, v in {"worker": dead, "effective": effective, "effective_key": key, "claim": key,
                     "launching": True}.items():
            trial.set_user_attr(k, v)
        storage.record_heartbeat(trial._trial_id)
        attrs = {"status": "measured", "effective_key": key, "effective": effective,
                 "single_tok_per_s": 60.0, "tok_per_s@32": 700.0}
        finish = finish_of(study, trial, attrs, [2.0, 1.5], {"measured": -1.0}, measured=True)
        Journal(config.workdir or f"studies/{config.name}").write(
            {"storage": storage_label(storage), "study_uid": study.user_attrs[UID_ATTR], "worker": dead,
             "finish": finish.to_dict(), "files": {}}, stem=f"{config.name}-{trial.number}")
        return trial.number
    finally:
        storage.engine.dispose()


def test_a_dead_neighbours_journaled_trial_is_told_from_the_journal_not_measured_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default workdir, studies/NAME, under the test's folder
    config = seeded_study(tmp_path, "neighbours")
    backend = counting_backend()
    left: list[int] = []

    def at(name: str) -> None:
        if name == "told" and not left:  # this worker's first trial is told
            left.append(leave_a_dead_workers_journaled_trial(config))

    monkeypatch.setattr(finish_module, "kill_point", at)
    events = []
    summary = run_study(config, config.storage, backend, on_event=lambda kind, info: events.append((kind, info)))
    assert len(left) == 1
    study = optuna.load_study(study_name=config.name, storage=config.storage)
    trials = study.get_trials(deepcopy=False)
    dead = trials[left[0]]
    # told with the journaled measurement, by this worker, not failed and queued again
    assert dead.state == TrialState.COMPLETE and dead.values == [2.0, 1.5], (dead.state, dead.user_attrs)
    assert not [t for t in trials if t.user_attrs.get("retry_of") == dead.number]
    assert not [t for t in trials if t.user_attrs.get("replayed_from") is not None]
    assert DEAD not in [dict(zip(DEAD, (a["speculative_num_steps"], a["speculative_eagle_topk"],
                                        a["speculative_num_draft_tokens"])))
                        for a in backend.launches if isinstance(a, dict)]
    # the budget of 3: this worker's 2 launches and the dead worker's measured one
    assert summary.launches == len(backend.launches) == 2, backend.launches
    assert ("replayed", {"trials": [(config.name, dead.number, "told")]}) in events
    assert Journal(config.workdir or f"studies/{config.name}").entries() == []


def leave_a_dead_workers_journaled_baseline(config, backend) -> tuple[int, list[float]]:
    """What a worker of this host killed right after journaling the baseline leaves: the RUNNING
    baseline trial in its name, claimed, and its journal entry (a real measurement of the model).
    Returns the trial's number and the baseline's values."""
    storage = open_storage(config.storage)
    try:
        bstudy = create_baseline_study(open_study(config.name, storage))
        trial = ask(bstudy)
        dead = {**Worker().as_dict(), "pid": 2 ** 22 + 7}  # this host, a process that is not there
        trial.set_user_attr("worker", dead)
        trial.set_user_attr("claim", "baseline")
        storage.record_heartbeat(trial._trial_id)
        m = backend.measure(None, "baseline", lambda m: None)
        attrs = {**baseline_attrs(m, config), **baseline_stage_attrs(m.figures), "status": "measured"}
        values = baseline_values(bstudy, attrs)
        finish = finish_of(bstudy, trial, attrs, values, {}, measured=True)
        uid = optuna.load_study(study_name=config.name, storage=storage).user_attrs[UID_ATTR]
        Journal(config.workdir or f"studies/{config.name}").write(
            {"storage": storage_label(storage), "study_uid": uid, "worker": dead, "finish": finish.to_dict(),
             "files": {}}, stem=f"{bstudy.study_name}-{trial.number}")
        return trial.number, values
    finally:
        storage.engine.dispose()


def test_a_dead_neighbours_journaled_baseline_is_the_baseline_not_measured_again(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = seeded_study(tmp_path, "neighbours")
    backend = counting_backend()
    left: list[tuple[int, list[float]]] = []
    # right after this worker's start-up replay, before its baseline: the neighbour dies in its tell
    backend.cleanup_orphans = lambda: left.append(leave_a_dead_workers_journaled_baseline(config, backend)) or []
    events = []
    run_study(config, config.storage, backend, on_event=lambda kind, info: events.append((kind, info)))
    (number, values), = left
    study = optuna.load_study(study_name=config.name, storage=config.storage)
    btrials = optuna.load_study(study_name=config.name + ".baseline", storage=config.storage).get_trials(
        deepcopy=False)
    measured = [t for t in btrials if t.state == TrialState.COMPLETE]
    # the neighbour's baseline told from the journal, and no second one measured
    assert [(t.number, t.values) for t in measured] == [(number, values)], [(t.number, t.state) for t in btrials]
    assert find_baseline(study).trial_number == number
    assert ("replayed", {"trials": [(config.name + ".baseline", number, "told")]}) in events
    assert Journal(config.workdir or f"studies/{config.name}").entries() == []
