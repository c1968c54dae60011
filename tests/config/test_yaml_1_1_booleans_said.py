"""A YAML 1.1 boolean (``yes``, ``no``, ``on``, ``off``, ``y``, ``n``) where a tuner file takes true
or false says to write true or false, and why: the files are read as YAML 1.2, where those are text.
QA: ``bench.stream: on`` said "input should be a valid boolean, got 'on'", naming no fix (server.args
switches already said "expected true or false (a switch)")."""

from __future__ import annotations

import os

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError

STUDY = yaml.safe_dump(model_study_data("s"), sort_keys=False)


@pytest.mark.parametrize("key, text, got", [
    ("bench.stream", STUDY.replace("bench:\n", "bench:\n  stream: on\n", 1), "on"),
    ("bench.lossless.enforce", STUDY.replace("bench:\n", "bench:\n  lossless: {enforce: Y}\n", 1), "Y"),
    ("default_seed_trials", STUDY + "default_seed_trials: yes\n", "yes"),
    ("default_seed_trials", STUDY + "default_seed_trials: off\n", "off"),
])
def test_a_yaml_1_1_boolean_says_to_write_true_or_false(tmp_path, key, text, got):
    assert text != STUDY
    (tmp_path / "s.yaml").write_text(text)
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path / "s.yaml")
    assert err.value.key == key
    assert err.value.message == (f"expected true or false, got {got!r} (these files are read as YAML 1.2, where "
                                 f"{got} is text, not a boolean)")


def test_create_says_it_in_one_line_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    (tmp_path / "s.yaml").write_text(STUDY.replace("bench:\n", "bench:\n  stream: on\n", 1))
    r = CliRunner().invoke(cli, ["study", "create", "s.yaml"], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines() == [f"error: {tmp_path / 's.yaml'}: bench.stream: expected true or false, "
                                             "got 'on' (these files are read as YAML 1.2, where on is text, not a "
                                             "boolean)"], r.output
    assert os.listdir(tmp_path) == ["s.yaml"]
