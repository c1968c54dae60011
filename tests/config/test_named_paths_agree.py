"""A study file read alone (``load_study(referenced=False)``, for the commands that read the study
from its storage) resolves every file it names exactly as the full load does: the same absolute
search space, suite file, simulator profile, model profile and landscape, from any working
directory; shipped names stay names."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tuner.config.study import load_study

ROOT = Path(__file__).resolve().parents[2]
PROFILES = ROOT / "tuner" / "sim" / "profiles"


def _files(folder: Path) -> None:
    (folder / "sub").mkdir(parents=True)
    shutil.copy(ROOT / "search_spaces" / "eagle3.yaml", folder / "sub" / "space.yaml")
    shutil.copy(PROFILES / "dense-27b-tp1.yaml", folder / "sub" / "prof.yaml")
    (folder / "suite.yaml").write_text(yaml.safe_dump({
        "name": "mine", "prompts": [{"name": "sea", "text": "Write a haiku about the sea."}],
        "single": {"lengths": [16], "repeats": 1}, "sweep": {"concurrencies": [1, 32]}}))


@pytest.mark.parametrize("backend", ["sim", "model"])
def test_the_study_file_alone_names_the_files_the_full_load_names(tmp_path, monkeypatch, backend):
    folder = tmp_path / "studies"
    _files(folder)
    data = {"name": "agree", "search_space": "sub/space.yaml", "bench": {"suite": "suite.yaml"},
            "server": {"model_path": "/m", "backend": backend}}
    if backend == "sim":
        data["server"]["sim"] = {"profile": "sub/prof.yaml"}
    else:
        data["server"]["model"] = {"profile": "./sub/prof.yaml", "noise": 0.02, "seed": 1}
    (folder / "s.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.chdir(tmp_path)  # another folder than the study file's
    full, alone = load_study("studies/s.yaml"), load_study("studies/s.yaml", referenced=False)
    assert full.search_space == alone.search_space == str(folder / "sub" / "space.yaml")
    assert full.bench.suite == alone.bench.suite == str(folder / "suite.yaml")
    assert full.server.sim.profile == alone.server.sim.profile
    assert full.server.model == alone.server.model or backend == "model"
    if backend == "sim":
        assert alone.server.sim.profile == str(folder / "sub" / "prof.yaml")
    else:  # the full load adds the landscape's hash only, for a landscape; a profile is a path alike
        assert full.server.model.profile == alone.server.model.profile == str(folder / "sub" / "prof.yaml")
    assert full.workdir == alone.workdir and full.storage == alone.storage


def test_shipped_names_stay_names_and_a_landscape_resolves_alike(tmp_path, monkeypatch):
    from support.landscapes import table_from_profile, write_table

    folder = tmp_path / "studies"
    folder.mkdir()
    table = table_from_profile(keep=lambda spec: spec.num_draft_tokens <= 4)
    write_table(folder / "t.json", table)  # a bare file name: a landscape is always a file
    data = {"name": "agree", "search_space": "eagle3", "bench": {"suite": "quick"},
            "objectives": ["single_speedup", "speedup@32"],
            "server": {"model_path": "/m", "backend": "model", "model": {"landscape": "t.json", "seed": 2}}}
    (folder / "s.yaml").write_text(yaml.safe_dump(data))
    monkeypatch.chdir(tmp_path)
    full, alone = load_study("studies/s.yaml"), load_study("studies/s.yaml", referenced=False)
    assert full.search_space == alone.search_space == "eagle3"
    assert full.bench.suite == alone.bench.suite == "quick"
    assert full.server.sim.profile == alone.server.sim.profile == "k2.6-tp8-pcie"
    assert full.server.model.landscape == alone.server.model.landscape == str(folder / "t.json")
    assert full.server.model.landscape_sha256 is not None and alone.server.model.landscape_sha256 is None
