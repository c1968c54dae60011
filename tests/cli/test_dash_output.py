"""`-o -` (and `--adaptive-out -`, `--png -`, `sim landscape --table -`) is not standard output: it
is refused with one line naming the flag, exit 2, and no file named ``-`` is left in the working
folder (QA: `export --format json -o -`, `report -o -`, `compare -o -` and `--table -` each wrote a
file called ``-``, exit 0, where a user expected the text on stdout)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dash")
    path = folder / "d.yaml"
    path.write_text(yaml.safe_dump(model_study_data("d", seed=1)))
    r = invoke("study", "run", path)
    assert r.exit_code == 0, r.output
    return path


@pytest.mark.parametrize("args,flag", [
    (["study", "export", "{s}", "--pick", "single", "--format", "json", "-o", "-"], "-o"),
    (["study", "export", "{s}", "--pick", "single", "-o", "-"], "-o"),
    (["study", "export", "{s}", "-o", "{tmp}/best.yaml", "--adaptive-out", "-"], "--adaptive-out"),
    (["study", "report", "{s}", "-o", "-"], "-o"),
    (["study", "report", "{s}", "-o", "{tmp}/r.html", "--png", "-"], "--png"),
    (["study", "compare", "{s}", "{s}", "-o", "-"], "-o"),
    (["sim", "landscape", "--suite", "quick", "--space", str(ROOT / "search_spaces" / "eagle3.yaml"),
      "--table", "-"], "--table"),
])
def test_dash_is_refused(study, args, flag, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    r = invoke(*[a.format(s=study, tmp=out) for a in args])
    assert r.exit_code == 2, r.output
    line = r.output.strip().splitlines()[-1]
    assert line.startswith(f"error: {flag}: -: ") and "file name" in line, r.output
    assert "Traceback" not in r.output
    assert os.listdir(tmp_path) == ["out"] and os.listdir(out) == []
