"""`tuner launch` names the study file and ``server.sim.profile`` for a profile that does not load,
as `tuner study run` does.

A find of a fuzz (qa138, hypothesis: one value of sim-demo changed): ``server.sim.profile: nope``
(or a profile file that is gone) made `launch --print` say ``error: nope: no such simulator
profile; ...``, naming neither the study file nor the key; `study run --dry-run` names both."""

from __future__ import annotations

import copy

import pytest
import yaml
from click.testing import CliRunner
from support.cli_inputs import DEMO

from tuner.cli import cli


@pytest.mark.parametrize("profile, says", [
    ("nope", "nope: no such simulator profile"),
    ("gone.yaml", "gone.yaml: file not found"),
], ids=["an unknown name", "a missing file"])
def test_launch_print_names_the_study_file_and_key_of_a_bad_profile(tmp_path, monkeypatch, profile, says):
    monkeypatch.chdir(tmp_path)
    study = copy.deepcopy(DEMO)
    study["server"]["sim"]["profile"] = profile
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    r = CliRunner().invoke(cli, ["launch", "--print", "--port", "4000", "s.yaml"])
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.output)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: s.yaml: server.sim.profile: "), r.stderr
    assert says in lines[0], lines[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.yaml"]
    dry = CliRunner().invoke(cli, ["study", "run", "--dry-run", "s.yaml"])
    assert dry.exit_code == 2 and dry.stderr.startswith("error: s.yaml: server.sim.profile: "), dry.output
