"""The pruner's noise reads each complete trial's stage estimates (tuner/engine/pruning.py,
``FrontPruner.verdict``), one per objective as the stage judge writes them. QA (qa191): a measured
trial's ``stages`` edited to entries of one estimate in a two-objective study (a hand edit, another
tool's write; each entry still ``{stage, estimates: [numbers]}``, so the readers' checks pass it) ended
every later run in IndexError from ``stage_noise`` right after its first trial's probe, that trial
interrupted and queued again: the study could measure nothing more. Such an entry is no estimate of
these objectives: the noise is learned without it, and the run goes on."""

from __future__ import annotations

import json
import sqlite3

from support.landscapes import SPACE

from tuner.config.space import SearchSpace
from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import make_backend
from tuner.engine.pruning import STAGES_ATTR
from tuner.engine.records import MEASURED, PRUNED, load_records
from tuner.engine.runner import run_study
from tuner.engine.study import create_study, extend_budget, open_study

STUDY = """name: short
search_space: {space}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  model: {{profile: k2.6-tp8-pcie, noise: 0.02, seed: 3}}
bench: {{suite: quick}}
sampler: {{seed: 2}}
budget: {{n_trials: 3, prune: {{startup_trials: 3}}}}
"""


def _set_stages(db, study_name: str, number: int, stages) -> None:
    """Write a finished trial's ``stages`` attribute as a hand edit would (Optuna refuses to)."""
    with sqlite3.connect(db) as conn:
        (trial_id,) = conn.execute(
            "SELECT trial_id FROM trials JOIN studies USING (study_id) WHERE study_name = ? AND number = ?",
            (study_name, number)).fetchone()
        changed = conn.execute("UPDATE trial_user_attributes SET value_json = ? WHERE trial_id = ? AND key = ?",
                               (json.dumps(stages), trial_id, STAGES_ATTR)).rowcount
    assert changed == 1


def test_a_stage_entry_without_an_estimate_per_objective_teaches_the_noise_nothing(tmp_path):
    path = tmp_path / "short.yaml"
    path.write_text(STUDY.format(space=SPACE))
    config = load_study(path)
    create_study(config, config.storage)
    backend = make_backend(config, SearchSpace.load(config.search_space), load_suite(config.bench.suite))
    run_study(config, config.storage, backend)
    study = open_study(config.name, config.storage)
    first = [r for r in load_records(study) if r.status == MEASURED]
    assert len(first) == 3 and all(len(r.attrs[STAGES_ATTR][0]["estimates"]) == 2 for r in first)

    edited = first[0]
    short = [{"stage": st["stage"], "estimates": st["estimates"][:1]} for st in edited.attrs[STAGES_ATTR]]
    _set_stages(tmp_path / "short.db", config.name, edited.number, short)
    extend_budget(study, 2)

    summary = run_study(config, config.storage, backend)  # IndexError from stage_noise before the fix
    assert summary.launches == 2
    records = load_records(open_study(config.name, config.storage))
    # the two new launches were judged after their stages (the pruner ran past the edited trial) and
    # finished: measured or pruned, none interrupted
    new = [r for r in records if r.number > max(r.number for r in first)]
    assert len(new) == 2 and all(r.status in (MEASURED, PRUNED) for r in new)
    assert all(r.attrs[STAGES_ATTR] for r in new)
    # the edited trial is still a measurement of the study, its values untouched
    again = next(r for r in records if r.number == edited.number)
    assert again.status == MEASURED and list(again.values) == list(edited.values)
