"""`-o` naming a symlink writes the file the link points to, as a shell's `>` does; the link stays.

QA (qa130): `ln -s shared/current.yaml deploy.yaml; tuner study export ... -o deploy.yaml` made
`deploy.yaml` a file of its own, exit 0, and the shared `current.yaml` a deployment reads kept the
old setting. A link into a folder that does not exist is one line naming -o, nothing written."""

from __future__ import annotations

import os

import pytest
import yaml
from support.cli_in_process import tuner_here
from support.model_study import make_model_study


@pytest.fixture(scope="module")
def study_file(tmp_path_factory):
    return make_model_study(tmp_path_factory.mktemp("linked"), "lk", n_trials=2)


def test_export_writes_through_the_link_and_keeps_it(study_file, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "current.yaml").write_text("old: 1\n")
    (tmp_path / "deploy.yaml").symlink_to("shared/current.yaml")
    r = tuner_here("study", "export", str(study_file), "--pick", "knee", "-o", "deploy.yaml", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert os.readlink(tmp_path / "deploy.yaml") == "shared/current.yaml"  # still the link
    written = yaml.safe_load((shared / "current.yaml").read_text())
    assert "old" not in written and "speculative-num-steps" in written
    assert sorted(p.name for p in shared.iterdir()) == ["current.yaml"]  # no temporary file left


def test_a_link_into_a_missing_folder_is_one_line_and_nothing_is_made(study_file, tmp_path):
    (tmp_path / "dangling.yaml").symlink_to("nowhere/x.yaml")
    r = tuner_here("study", "export", str(study_file), "--pick", "knee", "-o", "dangling.yaml", cwd=tmp_path)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: -o: dangling.yaml: folder "), r.output
    assert "where the symlink dangling.yaml points" in lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dangling.yaml"]
