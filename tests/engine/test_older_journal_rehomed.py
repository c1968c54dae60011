"""A journal entry an older tuner left, replayed by this one after another worker failed its trial
(tuner/engine/finish.py): the re-homed measurement keeps its setting.

A tuner before 2026-12-04 journaled a measurement without its setting (no ``setting`` in the
entry's finish: the setting lived on the trial only). QA (qa173): a worker of the tuner of 2026-12-01
(b2597a1) on PostgreSQL, killed right after journaling trial 1 (``TUNER_TEST_KILL_AT=journaled@2``);
another worker failed the trial as dead and queued its setting again; this tuner's next run in the
first worker's folder replayed the entry ('replayed from the journal into the storage: trial 1
(rehomed)'), and ``tuner study status`` showed the copy as 'unreadable: measured, but its effective
setting is not recorded': a measurement off the front for good, though the failed trial still held
the setting. The entry is written here as that tuner wrote it (JSON, no ``setting`` key); no old
tuner is installed."""

import json

from optuna.trial import TrialState

from tuner.config.study import load_study
from tuner.engine.finish import REHOMED, finish_of, replay_journal
from tuner.engine.journal import Journal
from tuner.engine.records import front_records, load_records
from tuner.engine.storage import storage_label
from tuner.engine.study import create_study, open_study
from tuner.engine.workers import Worker

STUDY = """
name: old
search_space: {space}
server: {{backend: sim, model_path: moonshotai/Kimi-K2.6, draft_model_path: sim/draft, tp_size: 8}}
bench: {{suite: quick}}
budget: {{n_trials: 3}}
default_seed_trials: false
"""


def test_an_older_tuner_s_entry_re_homed_takes_the_setting_its_failed_trial_holds(tmp_path):
    from support.faults import ROOT

    from tuner.config.space import SearchSpace
    from tuner.engine.asktell import ask

    path = tmp_path / "old.yaml"
    path.write_text(STUDY.format(space=ROOT / "search_spaces" / "eagle3.yaml"))
    config = load_study(path)
    create_study(config, config.storage)
    study = open_study(config.name, config.storage)
    trial = ask(study, SearchSpace.load(ROOT / "search_spaces" / "eagle3.yaml").distributions())
    requested = {"num_steps": 1, "eagle_topk": 1, "num_draft_tokens": 3}  # SGLang runs 1-1-2
    effective = {"num_steps": 1, "eagle_topk": 1, "num_draft_tokens": 2}
    for key, value in (("requested", requested), ("effective", effective), ("effective_key", "1-1-2"),
                       ("rewritten", True), ("worker", {"host": "gone", "pid": 1, "start": 1})):
        trial.set_user_attr(key, value)
    figures = {"status": "measured", "single_tok_per_s": 44.0, "tok_per_s@1": 44.0, "tok_per_s@8": 300.0,
               "tok_per_s@32": 840.0}
    entry = finish_of(study, trial, figures, [1.66, 1.07], {"measured": -1.0}, measured=True).to_dict()
    del entry["setting"]  # as the tuner of 2026-12-01 journaled it
    dead = {**Worker().as_dict(), "pid": 2 ** 22 + 7}  # this host, a process that is not there
    Journal(config.workdir).write({"storage": storage_label(study._storage), "study_uid": None,
                                   "worker": dead, "finish": json.loads(json.dumps(entry)), "files": {}},
                                  stem="old-0")
    # another worker judged the trial dead meanwhile
    study._storage.set_trial_state_values(trial._trial_id, TrialState.FAIL)

    assert replay_journal(study, config.workdir) == [("old", trial.number, REHOMED)]
    copy = load_records(study)[-1]  # the copy, added last
    assert copy.number > trial.number and copy.attrs.get("replayed_from") == trial.number, copy.attrs
    assert copy.status == "measured" and copy.feasible
    assert copy.effective.label() == "steps=1 topk=1 draft=2"
    assert copy.attrs["requested"] == requested and copy.attrs["effective_key"] == "1-1-2"
    assert copy.attrs["single_tok_per_s"] == 44.0  # the entry's figures, not the trial's
    # stored on the copy, where the workers look for a setting measured already: the queued retry
    # reuses it rather than launching the setting again
    stored = study.get_trials(deepcopy=False)[copy.number].user_attrs
    assert stored["effective_key"] == "1-1-2" and stored["effective"] == effective
    assert [r.number for r in front_records(load_records(study))] == [copy.number]


def test_a_measurement_an_older_tuner_re_homed_without_its_setting_reads_its_original_trial_s(tmp_path):
    # The tuner of 2026-12-01 (b2597a1), paused past the heartbeat's grace (SIGSTOP) while trial 1
    # ran, its trial failed by this tuner's worker on another host, re-homed its measurement when
    # woken as trial 5 (replayed_from: 1) with figures and no setting; status showed 'unreadable:
    # measured, but its effective setting is not recorded' (QA, qa173, on PostgreSQL). Stored here
    # through Optuna as that tuner stored it.
    import optuna
    from optuna.distributions import IntDistribution

    storage = f"sqlite:///{tmp_path / 'old.db'}"
    study = optuna.create_study(study_name="old", storage=storage, directions=["maximize", "maximize"])
    study.set_metric_names(["single_speedup", "speedup@32"])
    params = {"speculative_num_steps": 1, "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 3}
    dists = {k: IntDistribution(1, 64) for k in params}
    setting = {"requested": {"num_steps": 1, "eagle_topk": 1, "num_draft_tokens": 3},
               "effective": {"num_steps": 1, "eagle_topk": 1, "num_draft_tokens": 2},
               "effective_key": "1-1-2", "rewritten": True}
    study.add_trial(optuna.trial.create_trial(
        state=optuna.trial.TrialState.FAIL, params=params, distributions=dists,
        user_attrs={**setting, "claim": "1-1-2", "worker": {"host": "vm", "pid": 13449, "start": 1.0}}))
    figures = {"status": "measured", "single_tok_per_s": 43.6, "tok_per_s@1": 43.6, "tok_per_s@32": 806.6,
               "single_speedup": 1.644, "speedup@32": 1.027, "replayed_from": 0}
    study.add_trial(optuna.trial.create_trial(
        state=optuna.trial.TrialState.COMPLETE, params=params, distributions=dists, values=[1.644, 1.027],
        user_attrs=figures, system_attrs={"constraints": [-1.0], "constraints:measured": -1.0}))

    records = load_records(optuna.load_study(study_name="old", storage=storage))
    copy = records[1]
    assert copy.status == "measured" and copy.feasible, copy.attrs
    assert copy.effective.label() == "steps=1 topk=1 draft=2" and copy.attrs["effective_key"] == "1-1-2"
    assert copy.attrs["single_tok_per_s"] == 43.6 and "claim" not in copy.attrs  # its own figures only
    assert [r.number for r in front_records(records)] == [1]
    assert records[0].status is None and records[0].state == "FAIL"  # the original stays what it is
