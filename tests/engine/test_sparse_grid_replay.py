"""A landscape table that holds a coarse grid (what a node measured, not every setting of the space)
replayed by a study on ``server.backend: model``: the default sampler proposes the grid's settings
only, and a row listed as failed fails at launch as it failed on the node.

QA (qa131): on a grid of 44 rows (steps 2/4/6, topk 1/4/8, draft tokens 3-32) nearly every proposal
was a setting the table does not list, each a failed launch (``not_in_landscape``), and the default
search found neither optimum at noise 0 (0% of seeds, as random search)."""

from __future__ import annotations

import json
from pathlib import Path

import optuna
import pytest
from support.landscapes import table_from_profile, write_table
from support.prepared_once import prepared_once

from tuner.config.landscape import load_landscape
from tuner.config.space import SearchSpace
from tuner.config.study import study_from_dict
from tuner.config.suite import load_suite
from tuner.engine.backends import make_backend
from tuner.engine.records import launched as is_launch
from tuner.engine.records import load_records
from tuner.engine.runner import run_study
from tuner.engine.study import create_study, open_study
from tuner.results.pareto import pick_record, study_front

ROOT = Path(__file__).resolve().parents[2]
SPACE_FILE = ROOT / "search_spaces" / "eagle3.yaml"
SPACE = SearchSpace.load(SPACE_FILE)


def on_the_grid(spec) -> bool:
    return (spec.num_steps in (2, 4, 6) and spec.eagle_topk in (1, 4, 8)
            and spec.num_draft_tokens in (3, 4, 5, 7, 8, 16, 32))


def _grid_table(folder: Path) -> None:
    data = table_from_profile("k2.6-tp8-pcie", keep=on_the_grid)
    assert 30 <= len(data["configs"]) <= 60
    write_table(folder / "grid.json", data)


@pytest.fixture(scope="module")
def grid(tmp_path_factory) -> Path:
    """The grid's table, computed from the performance model once per session (~1 CPU s; each xdist
    worker that drew a test of this file computed it again, and the oom test once more); read only."""
    return prepared_once(tmp_path_factory, "grid", _grid_table) / "grid.json"


def run(table: Path, seed: int, budget: int = 16):
    config = study_from_dict({"name": "g", "search_space": str(SPACE_FILE), "bench": {"suite": "quick"},
                              "server": {"backend": "model", "model_path": "m", "draft_model_path": "d",
                                         "model": {"landscape": str(table), "noise": 0.0, "seed": seed}},
                              "sampler": {"seed": seed}, "budget": {"n_trials": budget}})
    storage = optuna.storages.InMemoryStorage()
    create_study(config, storage)
    run_study(config, storage, make_backend(config, SPACE, load_suite("quick")))
    return open_study("g", storage)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_default_search_keeps_to_the_grid_and_finds_both_optima(grid, seed):
    table = load_landscape(grid)
    study = run(grid, seed)
    records = load_records(study)
    launched = [r for r in records if r.effective is not None and is_launch(r.status, r.attrs)]
    assert len(launched) == 16
    assert all(r.effective in table.configs for r in launched), \
        [r.effective.label() for r in launched if r.effective not in table.configs]
    front = study_front(study)
    for pick, objective in (("single", "single_speedup"), ("throughput", "speedup@32")):
        best = max(table.speedups(spec)[objective] for spec in table.configs if spec in set(SPACE.effective_configs()))
        chosen = pick_record(front, records, pick).effective
        assert table.speedups(chosen)[objective] >= 0.97 * best, (pick, chosen.label())


def test_a_row_listed_as_failed_fails_as_it_did_and_fences_off_the_larger(grid, tmp_path):
    data = json.loads(grid.read_text())
    for row in data["configs"]:
        if row["num_draft_tokens"] >= 16:  # the node ran out of memory from 16 draft tokens on
            for key in [k for k in row if k not in ("num_steps", "eagle_topk", "num_draft_tokens")]:
                del row[key]
            row["failure"] = "oom"
    study = run(write_table(tmp_path / "oom.json", data), seed=0, budget=10)
    records = load_records(study)
    failed = [r for r in records if r.status == "failed"]
    assert failed and all(r.attrs.get("failure_class") == "oom" for r in failed)
    assert all("failed at launch (oom) where landscape" in r.attrs.get("failure_message", "") for r in failed)
    for r in records:  # after an oom, no setting at least as large in all three flags is launched
        later = [f for f in failed if f.number < r.number]
        assert not any(r.effective.num_steps >= f.effective.num_steps and r.effective.eagle_topk >= f.effective.eagle_topk
                       and r.effective.num_draft_tokens >= f.effective.num_draft_tokens for f in later), r.effective.label()
