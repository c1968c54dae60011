"""A study file's `search_space` or `bench.suite` that names a missing or unusable file is one line
naming the study file, the key and the file it names (as `server.model.landscape` already was):
`study.yaml: search_space: /abs/nowhere.yaml: file not found; check the path`, exit 2, nothing
written (QA: the line named only the missing file, not the study file or key that refers to it;
with several studies sharing folders, which one was wrong was left to guess)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def study(search_space: str, suite: str) -> dict:
    return model_study_data("r", search_space=search_space, suite=suite)


SPACE = str(ROOT / "search_spaces" / "eagle3.yaml")


@pytest.mark.parametrize("key,value,named,words", [
    ("search_space", "sub/nowhere.yaml", "sub/nowhere.yaml", "file not found"),
    ("search_space", "sub", "sub", "is a folder"),
    ("search_space", "sub/list.yaml", "sub/list.yaml", "expected a mapping at the top level"),
    ("search_space", "sub/latin1.yaml", "sub/latin1.yaml", "not UTF-8"),
    ("bench.suite", "sub/nowhere.yaml", "sub/nowhere.yaml", "file not found"),
    ("bench.suite", "sub/list.yaml", "sub/list.yaml", "expected a mapping at the top level"),
    ("bench.suite", "sub/latin1.yaml", "sub/latin1.yaml", "not UTF-8"),
])
def test_a_bad_reference_names_study_key_and_file(tmp_path, monkeypatch, key, value, named, words):
    (tmp_path / "studies" / "sub").mkdir(parents=True)
    (tmp_path / "studies" / "sub" / "list.yaml").write_text("- a\n- b\n")
    (tmp_path / "studies" / "sub" / "latin1.yaml").write_bytes(b"name: caf\xe9\n")
    data = study(value, "quick") if key == "search_space" else study(SPACE, value)
    path = tmp_path / "studies" / "r.yaml"
    path.write_text(yaml.safe_dump(data))
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # relative to the study file's folder, not the working folder
    for command in ("create", "run"):
        r = CliRunner().invoke(cli, ["study", command, str(path)], catch_exceptions=False)
        assert r.exit_code == 2, r.output
        lines = r.output.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in r.output, r.output
        assert lines[0].startswith(f"error: {path}: {key}: {tmp_path / 'studies' / named}: "), lines[0]
        assert words in lines[0], lines[0]
    assert sorted(os.listdir(tmp_path / "studies")) == ["r.yaml", "sub"] and os.listdir(elsewhere) == []
