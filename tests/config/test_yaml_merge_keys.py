"""A YAML merge key (``<<``) in any tuner file is refused, one line naming the file, the mapping and
the line, exit 2, nothing written. Aliases were refused already, but an inline merge was read: its
keys were overridden silently by the mapping's own (QA: ``server: {<<: {tp_size: 4}, ..., tp_size:
8}`` created a TP-8 study without a word; two ``<<`` keys in one mapping kept one of them), which
is what refusing a key given twice is for; YAML 1.2, which these files follow otherwise, has none."""

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


@pytest.mark.parametrize("merge, where", [
    ("  <<: {tp_size: 4}\n", "server: line 4"),  # the mapping's own tp_size: 8 won, silently
    ("  <<: {tp_size: 4}\n  <<: {tp_size: 2}\n", "server: line 4"),
    ("  <<: [{tp_size: 4}, {tp_size: 2}]\n", "server: line 4"),
    ("  !!merge x: {tp_size: 4}\n", "server: line 4"),
])
def test_a_merge_in_the_study_file_is_refused_and_nothing_is_written(tmp_path, monkeypatch, merge, where):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    text = STUDY.replace("server:\n", "server:\n" + merge, 1)
    assert text != STUDY
    (tmp_path / "s.yaml").write_text(text)
    r = CliRunner().invoke(cli, ["study", "create", "s.yaml"], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines() == [f"error: {tmp_path / 's.yaml'}: {where}: merge keys (<<) are not supported; write "
                                             "the keys out in this mapping"], r.output
    assert os.listdir(tmp_path) == ["s.yaml"]


def test_a_merge_at_the_top_level_names_its_line(tmp_path):
    (tmp_path / "s.yaml").write_text("<<: {name: t}\n" + STUDY)
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path / "s.yaml")
    assert str(err.value) == f"{tmp_path / 's.yaml'}: line 1: merge keys (<<) are not supported; write the keys out in this mapping"


def test_a_merge_in_a_search_space_is_refused(tmp_path):
    (tmp_path / "sp.yaml").write_text(
        "params:\n  speculative_num_steps: {<<: {low: 1}, low: 2, high: 4}\n"
        "  speculative_eagle_topk: {choices: [1]}\n  speculative_num_draft_tokens: {low: 2, high: 8}\n")
    with pytest.raises(ConfigError) as err:
        SearchSpace.load(tmp_path / "sp.yaml")
    assert err.value.key == "params.speculative_num_steps" and "merge keys (<<)" in str(err.value)


def test_a_key_spelt_lt_lt_in_quotes_is_only_an_unknown_key(tmp_path):
    (tmp_path / "s.yaml").write_text(STUDY.replace("server:\n", "server:\n  '<<': {tp_size: 4}\n", 1))
    with pytest.raises(ConfigError) as err:
        load_study(tmp_path / "s.yaml")
    assert err.value.key == "server.<<" and "unknown key" in str(err.value)
