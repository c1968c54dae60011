"""A landscape table holding a grid of a few rows, replayed by the default sampler once every row was
tried: the run ends there ("every setting the landscape table lists has been tried"), having launched
no setting the table does not list.

QA (qa133): on a grid of one row every trial after it was a setting the table never measured, each a
failed launch (``not_in_landscape``) at a model load's modelled GPU time, until the budget was spent."""

from __future__ import annotations

from pathlib import Path

import optuna
from support.landscapes import table_from_profile, write_table

from tuner.config.landscape import load_landscape
from tuner.config.space import SearchSpace
from tuner.config.study import study_from_dict
from tuner.config.suite import load_suite
from tuner.engine import runner
from tuner.engine.backends import make_backend
from tuner.engine.records import launched as is_launch
from tuner.engine.records import load_records
from tuner.engine.runner import run_study
from tuner.engine.study import create_study, open_study

ROOT = Path(__file__).resolve().parents[2]
SPACE_FILE = ROOT / "search_spaces" / "eagle3.yaml"
SPACE = SearchSpace.load(SPACE_FILE)
GRID = {(3, 1, 4), (2, 4, 8)}


def test_an_exhausted_grid_launches_nothing_it_does_not_list(tmp_path, monkeypatch):
    # were the run not to end with the grid, it would end after this many proposals launching nothing
    monkeypatch.setattr(runner, "MAX_IDLE_PROPOSALS", 5)
    table = write_table(tmp_path / "grid.json", table_from_profile(
        keep=lambda s: (s.num_steps, s.eagle_topk, s.num_draft_tokens) in GRID))
    config = study_from_dict({"name": "g", "search_space": str(SPACE_FILE), "bench": {"suite": "quick"},
                              "server": {"backend": "model", "model_path": "m", "draft_model_path": "d",
                                         "model": {"landscape": str(table), "noise": 0.0, "seed": 0}},
                              "sampler": {"seed": 0}, "budget": {"n_trials": 8}})
    storage = optuna.storages.InMemoryStorage()
    create_study(config, storage)
    summary = run_study(config, storage, make_backend(config, SPACE, load_suite("quick")))
    records = load_records(open_study("g", storage))
    launched = [r for r in records if r.effective is not None and is_launch(r.status, r.attrs)]
    listed = load_landscape(table).listed
    assert {r.effective for r in launched} == listed, [r.effective.label() for r in launched]
    assert not [r for r in records if r.status == "failed"], \
        [(r.effective.label(), r.attrs.get("failure_class")) for r in records if r.status == "failed"]
    assert summary.failed == 0 and summary.measured == 2
    # it ends with the grid, before proposing a listed setting again (QA: 200 trials told `reused`)
    assert summary.stopped_because == "every setting the landscape table lists has been tried", summary
    assert summary.reused == 0 and len(records) == 2
