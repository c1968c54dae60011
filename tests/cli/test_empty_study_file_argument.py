"""An empty study-file argument (``tuner doctor ''``, a ``"$STUDY"`` left unset in a script) says it is
empty, exit 2 (doctor: its study-file line, exit 1), nothing written. QA: ``Path("")`` is the
current folder, so ``doctor`` and ``launch`` said "/current/folder: is a folder; give a file" and
``study init ''`` "FILE: .: is a folder; give a file name", naming a folder nobody gave."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner

from tuner.cli import cli


@pytest.mark.parametrize("args, code, line", [
    (["doctor", ""], 1, "fail  study file: <study file>: empty; give the study's YAML file"),
    (["launch", "", "--print"], 2, "error: <study file>: empty; give the study's YAML file"),
    (["study", "init", ""], 2, "error: FILE: is empty; give the study file's name, e.g. demo.yaml"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_an_empty_study_file_says_so(tmp_path, monkeypatch, args, code, line):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    r = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert r.exit_code == code, r.output
    assert r.output.strip().splitlines() == [line], r.output
    assert str(tmp_path) not in r.output and "is a folder" not in r.output
    assert os.listdir(tmp_path) == []
