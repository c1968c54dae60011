"""A key YAML reads as a number, a boolean or null (``1:``, ``true:``, ``~:``), and an empty key
(``"":``), are one line naming the file, the mapping, the line and what to write, exit 2, nothing
written. QA: pydantic's "keys should be strings" named the key ``[1]``, as a list index, for ``1:``
and for ``true:`` alike, and said nothing of quoting; ``"":`` was "unknown key" naming no key, and
in ``server.args`` "SGLang 0.5.23's parser refuses -- as ambiguous (it could be
--abort-on-priority-when-disabled or ...)"."""

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

STUDY = yaml.safe_dump(model_study_data("s"), sort_keys=False)
LAST = len(STUDY.splitlines()) + 1  # the line a key appended to the file stands on


@pytest.mark.parametrize("key, says", [
    ("1", "the key 1 is read by YAML as a number, and every key is text: quote it ('1')"),
    ("1.5", "the key 1.5 is read by YAML as a number"),
    ("true", "the key true is read by YAML as a boolean, and every key is text: quote it ('true')"),
    ("null", "the key null is read by YAML as null"),
    ("~", "the key ~ is read by YAML as null"),
])
def test_a_key_that_is_no_text_is_named_with_its_line(tmp_path, monkeypatch, key, says):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    (tmp_path / "s.yaml").write_text(f"{STUDY}{key}: x\n")
    r = CliRunner().invoke(cli, ["study", "create", "s.yaml"], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {tmp_path / 's.yaml'}: line {LAST}: {says}"), r.output
    assert "keys should be strings" not in r.output
    assert os.listdir(tmp_path) == ["s.yaml"]


def test_a_nested_key_names_its_mapping(tmp_path):
    (tmp_path / "s.yaml").write_text(STUDY.replace("server:\n", "server:\n  args: {1: 2}\n", 1))
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path / "s.yaml")
    assert err.value.key == "server.args" and "the key 1 is read by YAML as a number" in err.value.message


def test_a_key_in_a_search_space(tmp_path):
    (tmp_path / "sp.yaml").write_text(
        "params:\n  speculative_num_steps: {low: 1, high: 4, true: 2}\n"
        "  speculative_eagle_topk: {choices: [1]}\n  speculative_num_draft_tokens: {low: 2, high: 8}\n")
    with pytest.raises(ConfigError) as err:
        SearchSpace.load(tmp_path / "sp.yaml")
    assert err.value.key == "params.speculative_num_steps" and "the key true is read by YAML as a boolean" in str(err.value)


@pytest.mark.parametrize("where, text, says", [
    ("", '"": x\n', "the empty key ('') is unknown; expected one of: name, "),
    ("server.", '  "": x\n', "the empty key ('') is unknown; expected one of: backend, "),
    ("server.args", '  args: {"": 2}\n', "'': an empty key is no server argument"),
])
def test_an_empty_key_says_so(tmp_path, where, text, says):
    body = STUDY + text if not where else STUDY.replace("server:\n", "server:\n" + text, 1)
    (tmp_path / "s.yaml").write_text(body)
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path / "s.yaml")
    assert err.value.key == where and err.value.message.startswith(says), str(err.value)
    assert "ambiguous" not in str(err.value)


def test_a_quoted_number_key_is_text(tmp_path):
    (tmp_path / "s.yaml").write_text(f"{STUDY}'1': x\n")
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path / "s.yaml")
    assert err.value.key == "1" and "unknown key" in err.value.message
