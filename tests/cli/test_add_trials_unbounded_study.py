"""`run STUDY.yaml --add-trials N` on a study file with no `budget.n_trials` (a night bounded by its
`budget.timeout`, or `n_trials: null`): there is no launch budget to extend, and the refusal comes
before anything is written (QA, qa139: the study, its database and its seed trials were created
first, then the run said the study has no budget)."""

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli


@pytest.mark.parametrize("budget", [{"timeout": "8h"}, {"n_trials": None}])
def test_add_trials_to_a_file_without_n_trials_is_one_line_and_writes_nothing(tmp_path, monkeypatch, budget):
    monkeypatch.chdir(tmp_path)
    data = model_study_data("night")
    data["budget"] = budget
    (tmp_path / "night.yaml").write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(cli, ["study", "run", "night.yaml", "--add-trials", "3"])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert lines[0].startswith("error: night.yaml: budget.n_trials: ") and "--add-trials" in lines[0], r.output
    assert "--n-trials N" in lines[0], r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["night.yaml"]  # no night.db, no night/
