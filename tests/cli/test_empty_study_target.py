"""An empty study argument or ``--study ''`` (a script's unset ``"$STUDY"``) of a `tuner study` command
is one line saying it is empty, exit 2, nothing written, as `tuner launch ''` says it.

Finds of a fuzz (qa138, hypothesis, odd argument values): `study status ''`, `create ''`, `run
--dry-run ''`, `report ''`, `compare '' B` and `run --study ''` printed click's usage block (four
lines: Usage, Try, a blank line, "Error: give a study file, or a study NAME (--study NAME) with
--storage URL"), naming nothing empty, the empty value read as left out."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tuner.cli import cli

READS = "error: <study file>: empty; give the study's YAML file or the study's name"
WRITES = "error: <study file>: empty; give the study's YAML file"
STUDY = "error: --study: is empty: give the study's name, or leave --study out and give its file"


@pytest.mark.parametrize("args, line", [
    (["study", "status", ""], READS),
    (["study", "report", ""], READS),
    (["study", "compare", "", "b.yaml"], READS),
    (["study", "create", ""], WRITES),
    (["study", "run", "--dry-run", ""], WRITES),
    (["study", "run", "--dry-run", "--study", "", "--storage", "sqlite:///x.db"], STUDY),
    (["study", "pareto", "--study", "", "--storage", "sqlite:///x.db"], STUDY),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_an_empty_study_argument_says_so(tmp_path, monkeypatch, args, line):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.output)
    assert r.stderr.splitlines() == [line], r.stderr
    assert list(tmp_path.iterdir()) == []
