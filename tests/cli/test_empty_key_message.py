"""A key left empty (`budget:` with its lines commented out: YAML null) says so, and a scalar where a
mapping goes names no Python class: QA saw `budget: input should be a valid
dictionary or instance of BudgetSettings` -- a Python class name, and no word that the key is empty.
Exit 2, one line naming the file and key, nothing written."""

from __future__ import annotations

import os

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli


def study() -> dict:
    return model_study_data("e")


@pytest.mark.parametrize("key,value,words", [
    ("budget", None, "budget: is empty (YAML null); give a mapping"),
    ("bench", None, "bench: is empty (YAML null); give a mapping"),
    ("objectives", None, "objectives: is empty (YAML null); give a list"),
    ("budget", 5, "budget: input should be a valid dictionary, got 5"),
    ("server", "sim", "server: input should be a valid dictionary, got 'sim'"),
])
def test_an_empty_or_scalar_section_is_said_plainly(tmp_path, key, value, words):
    data = study()
    data[key] = value
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(cli, ["study", "create", str(path)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert r.output.strip().startswith(f"error: {path}: {words}"), r.output
    assert "instance of" not in r.output and "Settings" not in r.output and "Config" not in r.output
    assert os.listdir(tmp_path) == ["e.yaml"]


def test_an_empty_prune_key_says_it_is_empty(tmp_path):
    """QA: `budget:` / `  prune:` with its mapping commented out said only "budget.prune: expected
    true, false or a mapping ...", where every other key left empty says it is empty."""
    data = study()
    data["budget"] = {"n_trials": 2, "prune": None}
    path = tmp_path / "e.yaml"
    path.write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(cli, ["study", "create", str(path)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert r.output.strip().startswith(f"error: {path}: budget.prune: is empty (YAML null); give true, false "
                                       "or a mapping"), r.output
    assert os.listdir(tmp_path) == ["e.yaml"]
