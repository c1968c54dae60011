"""What the suite tests of ``tests/config`` share: a simulator study file whose suite is written inline,
and the contract of its refusal by a real ``tuner study create`` process run in the study's folder
(one ``error:`` line, exit 2, nothing written there)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

#: ``{name}`` and ``{suite}`` (a YAML flow mapping) filled in by :func:`refused_create`
STUDY = ("name: {name}\nsearch_space: eagle3\nserver: {{backend: sim, model_path: moonshotai/Kimi-K2.6,\n"
         "  draft_model_path: sim/kimi-k2.6-eagle3, tp_size: 8, sim: {{profile: k2.6-tp8-pcie}}}}\n"
         "bench:\n  suite: {suite}\nobjectives: [single_speedup]\nbudget: {{n_trials: 1}}\n")


def refused_create(folder: Path, name: str, suite: str, timeout: float = 120) -> str:
    """Write ``folder/study.yaml`` (study ``name`` with the inline ``suite``), run ``tuner study create
    study.yaml`` in ``folder``; it must exit 2 with one line and add nothing to ``folder``: that line."""
    (folder / "study.yaml").write_text(STUDY.format(name=name, suite=suite))
    before = sorted(p.name for p in folder.iterdir())
    r = subprocess.run([sys.executable, "-m", "tuner", "study", "create", "study.yaml"], cwd=folder,
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, lines
    assert sorted(p.name for p in folder.iterdir()) == before
    return lines[0]
