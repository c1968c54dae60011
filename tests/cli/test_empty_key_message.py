"""A key left empty (`budget:` with its lines commented out: YAML null) says so, and a scalar where a
mapping goes names no Python class: QA saw `budget: input should be a valid
dictionary or instance of BudgetSettings` -- a Python class name, and no word that the key is empty.
Exit 2, one line naming the file and key, nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def study() -> dict:
    return {"name": "e", "search_space": str(ROOT / "search_spaces" / "eagle3.yaml"),
            "server": {"backend": "model", "model_path": "m", "draft_model_path": "d", "tp_size": 8,
                       "model": {"profile": "k2.6-tp8-pcie"}},
            "bench": {"suite": "quick"}, "budget": {"n_trials": 2}}


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
