"""A dataset's file given as the ``dataset:`` value itself, or under another tool's key (``file``,
``dataset_path``, ...), or a named set as SGLang's ``--dataset-name`` takes one, is refused with the
fix (QA: ``dataset: data.jsonl`` was "input should be a valid dictionary, got 'data.jsonl'";
``dataset: {file: data.jsonl}`` "dataset.path: required key is missing")."""

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def _said(tmp_path, dataset) -> str:
    (tmp_path / "s.yaml").write_text(json.dumps({"name": "s", "dataset": dataset, "single": {"lengths": [8]}}))
    with pytest.raises(ConfigError) as err:
        load_suite(tmp_path / "s.yaml")
    return str(err.value)


@pytest.mark.parametrize("dataset, says", [
    ("data.jsonl", "expected a mapping with the file as its path: write it as dataset: {path: data.jsonl}"),
    ({"file": "data.jsonl", "n": 4}, "file: unknown key; the file is the dataset's path: write it as path: data.jsonl"),
    ({"dataset_path": "sg.json"}, "dataset_path: unknown key; the file is the dataset's path: write it as path: sg.json"),
    ({"name": "sharegpt", "n": 10}, "name: unknown key; the tuner draws from a file, not a named set (SGLang's "
                                    "--dataset-name): give the file as path and its layout as format (jsonl, "
                                    "sharegpt or custom)"),
])
def test_the_file_given_otherwise_says_how_to_write_it(tmp_path, dataset, says):
    assert _said(tmp_path, dataset) == f"{tmp_path / 's.yaml'}: dataset: {says}"


def test_the_fix_given_reads(tmp_path):
    (tmp_path / "data.jsonl").write_text(json.dumps({"prompt": "hello there"}) + "\n")
    (tmp_path / "s.yaml").write_text(json.dumps({"name": "s", "dataset": {"path": "data.jsonl", "n": 1},
                                                 "single": {"lengths": [8]}}))
    assert [p.text for p in load_suite(tmp_path / "s.yaml").prompts] == ["hello there"]


def test_a_mapping_without_a_path_or_such_a_key_says_path_is_missing(tmp_path):
    assert _said(tmp_path, {"n": 4}) == f"{tmp_path / 's.yaml'}: dataset.path: required key is missing"
