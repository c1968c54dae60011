"""`tuner study report --png DIR` where matplotlib is not installed (the `report` extra): one line naming
--png and the install that adds it, exit 2, nothing written (QA, qa134: click's usage block came first)."""

from __future__ import annotations

import sys

from support.cli_in_process import tuner_here
from support.model_study import make_model_study


def test_png_without_matplotlib_is_one_line_and_writes_nothing(tmp_path, monkeypatch):
    study = make_model_study(tmp_path, "nopng", n_trials=2)
    before = sorted(p.name for p in tmp_path.iterdir())
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # `import matplotlib` raises ImportError
    r = tuner_here("study", "report", str(study), "-o", "page.html", "--png", "charts", cwd=tmp_path)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert lines == [lines[0]] and lines[0].startswith("error: --png needs matplotlib: pip install "), r.output
    assert "Usage:" not in r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no page, no chart folder
