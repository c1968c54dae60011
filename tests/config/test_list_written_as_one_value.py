"""A list key given one value (``objectives: single_speedup``, a suite's ``concurrencies: "1, 8, 32"``)
says to write it in brackets, with the key and the value as written (tuner/config/yamlfile.py
``validation_error``).

QA (qa228): ``objectives: input should be a valid list, got 'single_speedup'`` named no fix."""

from __future__ import annotations

import yaml
from support.cli_inputs import refused
from support.demo_study import ROOT, demo_study

from tuner.config.yamlfile import yaml_text


def _line(study):
    """The one error line of ``tuner study create STUDY`` (exit 2, nothing written: support/cli_inputs.py)."""
    return refused(study.parent, ["study", "create", str(study)])


def test_one_objective_written_bare(tmp_path):
    line = _line(demo_study(tmp_path, "li", objectives="single_speedup"))
    assert "li.yaml: objectives: input should be a valid list, got 'single_speedup'; write it as a list, in " \
           "brackets: objectives: [single_speedup]" in line, line
    fix = line.split("in brackets: ", 1)[1]
    assert yaml_text(fix) == {"objectives": ["single_speedup"]}
    assert not (tmp_path / "li.db").exists()


def test_concurrencies_as_one_text_in_a_suite(tmp_path):
    suite = yaml.safe_load((ROOT / "tuner" / "config" / "suites" / "quick.yaml").read_text())
    suite["sweep"]["concurrencies"] = "1, 8, 32"
    (tmp_path / "su.yaml").write_text(yaml.safe_dump(suite))
    line = _line(demo_study(tmp_path, "li", **{"bench.suite": str(tmp_path / "su.yaml")}))
    assert "su.yaml: sweep.concurrencies: input should be a valid list, got '1, 8, 32'; write it as a list, " \
           "in brackets: concurrencies: [1, 8, 32]" in line, line
    assert yaml_text(line.split("in brackets: ", 1)[1]) == {"concurrencies": [1, 8, 32]}
