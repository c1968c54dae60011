"""A list where a tuner file takes a mapping (``server: [a, b]``, ``server.args: [...]``, a space's
``params``) says a mapping is expected, that a list was given, and how to write it; a search-space
parameter given as a bare list of values says it is written ``{choices: [...]}``. QA: each said
only "input should be a valid dictionary", naming no fix."""

from __future__ import annotations

import os

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli
from tuner.config.space import SearchSpace
from tuner.config.study import load_study
from tuner.config.yamlfile import ConfigError

MAPPING = ("expected a mapping (a dictionary: key: value lines under it), got a list of {n}; write its keys, "
           "not '- ' items")


@pytest.mark.parametrize("key, value", [("server", ["a", "b"]), ("server.args", ["trust_remote_code"]),
                                        ("server.env", ["A=1"]), ("bench.lossless", [0.9])])
def test_a_list_for_a_mapping_says_how_to_write_it(tmp_path, key, value):
    data = model_study_data("s")
    target = data
    *parents, last = key.split(".")
    for part in parents:
        target = target[part]
    target[last] = value
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path / "s.yaml")
    assert err.value.key == key and err.value.message == MAPPING.format(n=len(value)), str(err.value)


def test_create_says_it_in_one_line_and_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({**model_study_data("s"), "server": ["a", "b"]}))
    r = CliRunner().invoke(cli, ["study", "create", "s.yaml"], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines() == [f"error: {tmp_path / 's.yaml'}: server: {MAPPING.format(n=2)}"]
    assert os.listdir(tmp_path) == ["s.yaml"]


def test_a_space_parameter_as_a_bare_list_is_told_the_choices_form(tmp_path):
    (tmp_path / "sp.yaml").write_text(
        "params:\n  speculative_num_steps: [1, 2]\n"
        "  speculative_eagle_topk: {choices: [1]}\n  speculative_num_draft_tokens: {low: 2, high: 8}\n")
    with pytest.raises(ConfigError) as err:
        SearchSpace.load(tmp_path / "sp.yaml")
    assert str(err.value) == (f"{tmp_path / 'sp.yaml'}: params: speculative_num_steps: a list of values is "
                              "written {choices: [1, 2]} (or a range {low, high})")


def test_a_space_s_params_as_a_list(tmp_path):
    (tmp_path / "sp.yaml").write_text("params: [1]\n")
    with pytest.raises(ConfigError) as err:
        SearchSpace.load(tmp_path / "sp.yaml")
    assert err.value.key == "params" and err.value.message == MAPPING.format(n=1)
