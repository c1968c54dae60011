"""A suite's ``timeout_s`` given a duration with a unit (``5m``), as the study's budget and trial
timeouts take it, says the number of seconds to write, in a suite file and an inline suite alike, as
the study's own ``*_s`` keys do (tuner/config/suite.py, ``study.seconds_only``).

QA (qa228): ``timeout_s: 5m`` in a suite file said only ``timeout_s: input should be a valid number,
got '5m'``, naming no fix."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from support.demo_study import ROOT, demo_study

from tuner.cli import cli

QUICK = ROOT / "tuner" / "config" / "suites" / "quick.yaml"


@pytest.mark.parametrize("written, seconds", [("5m", "300"), ("1h30m", "5400"), ("90s", "90")])
def test_a_duration_in_a_suite_file_says_the_seconds(tmp_path, written, seconds):
    suite = yaml.safe_load(QUICK.read_text())
    suite["timeout_s"] = written
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(suite))
    study = demo_study(tmp_path, "to", **{"bench.suite": str(tmp_path / "s.yaml")})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert (f"s.yaml: timeout_s: takes a YAML number of seconds, not a duration with a unit: "
            f"write {seconds} for '{written}'") in lines[0], r.output
    assert not (tmp_path / "to.db").exists()


def test_inline_as_its_study_file(tmp_path):
    suite = yaml.safe_load(QUICK.read_text())
    suite["timeout_s"] = "5m"
    study = demo_study(tmp_path, "to", **{"bench.suite": suite})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert "to.yaml: bench.suite.timeout_s: takes a YAML number of seconds" in r.output, r.output
    assert "write 300 for '5m'" in r.output, r.output


def test_a_number_of_seconds_is_taken(tmp_path):
    suite = yaml.safe_load(QUICK.read_text())
    suite["timeout_s"] = 120
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(suite))
    study = demo_study(tmp_path, "to", **{"bench.suite": str(tmp_path / "s.yaml")})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
