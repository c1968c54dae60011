"""A grid study runs to its grid's end and stops there, by ask and tell (tuner.engine.grid).

QA: Optuna's GridSampler calls ``study.stop()`` from its ``after_trial``, which raises outside
``Study.optimize``; every grid study whose budget outlasted its grid ended in a traceback at the tell
of its last point. The performance model backend (``server.backend: model``) runs the studies: no
server, no HTTP."""

from __future__ import annotations

import re

from click.testing import CliRunner
from optuna.trial import TrialState

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.engine.study import open_study

STUDY = """name: {name}
search_space: eagle3
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  model: {{profile: k2.6-tp8-pcie, noise: 0.02, seed: 1}}
bench: {{suite: quick}}
default_seed_trials: {seeds}
sampler:
  name: grid
  seed: 3
  options: {{search_space: {{speculative_num_steps: [2, 3], speculative_eagle_topk: [1],
                             speculative_num_draft_tokens: [3]}}}}
budget: {{n_trials: 8}}
"""
GRID_DONE = "every setting of the grid (sampler.options.search_space) has been tried"


def run(path):
    return CliRunner().invoke(cli, ["study", "run", str(path)], catch_exceptions=False)


def launched(path) -> list[tuple[int, int, int]]:
    config = load_study(path)
    study = open_study(config.name, config.storage)
    done = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE, TrialState.PRUNED, TrialState.FAIL))
    return sorted((t.params["speculative_num_steps"], t.params["speculative_eagle_topk"],
                   t.params["speculative_num_draft_tokens"]) for t in done)


def test_a_grid_study_stops_at_the_grids_end(tmp_path):
    path = tmp_path / "grid.yaml"
    path.write_text(STUDY.format(name="grid", seeds="false"))
    first = run(path)
    assert first.exit_code == 0, first.output
    assert GRID_DONE in first.output and re.search(r"done: 2 measured, 0 pruned, 0 failed", first.output)
    assert launched(path) == [(2, 1, 3), (3, 1, 3)]
    again = run(path)  # a finished grid: nothing launched, nothing asked
    assert again.exit_code == 0, again.output
    assert GRID_DONE in again.output and "done: 0 measured" in again.output
    assert launched(path) == [(2, 1, 3), (3, 1, 3)]


def test_queued_settings_are_measured_before_the_grid_ends_the_run(tmp_path):
    path = tmp_path / "seeded.yaml"
    path.write_text(STUDY.format(name="seeded", seeds="true"))
    r = run(path)
    assert r.exit_code == 0, r.output
    assert GRID_DONE in r.output
    tried = launched(path)
    assert {(2, 1, 3), (3, 1, 3), (3, 1, 4), (4, 8, 64)} <= set(tried), tried  # grid and seeds
