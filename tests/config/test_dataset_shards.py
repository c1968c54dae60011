"""A dataset given as a folder of shards, or as a pattern matching them (a Hugging Face download's
``train-00000-of-00002.jsonl``; ``data_files: train-*.jsonl``), is named so, with the command that joins
them into one file beside their folder: ``awk 1`` for JSON lines (each line whole, a shard without a last
line end too, which ``cat`` would join to the next shard's first row), ``jq -s add`` for ShareGPT lists.
(QA qa188: the folder was "is a folder; give a file", the pattern "not found".) The command is run as
printed (jq where it is installed; without it its words are checked) and the file it writes loaded; a
folder of no data file is refused as before."""

import json
import re
import shlex
import shutil
import subprocess

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

JQ = shutil.which("jq")
CONVERSATIONS = [{"id": f"c{i}", "conversations": [
    {"from": "human", "value": f"Tell me about the sea, number {i}."},
    {"from": "gpt", "value": "The sea is wide and deep, and it rolls on and on."}]} for i in range(4)]


def _refusal(tmp_path, path: str) -> str:
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": path}}, tmp_path)
    return str(err.value)


def _joined(tmp_path, said: str, tool: str, out: str):
    found = re.search(r"join them \((\S+ .*?) > (\S+) writes them as one; give that file as dataset\.path\)$", said)
    assert found, said
    words = shlex.split(found.group(1))
    assert words[0] == tool and shlex.split(found.group(2)) == [str(tmp_path / out)], said
    if shutil.which(tool) is None:
        return None
    with open(tmp_path / out, "w") as f:
        subprocess.run(words, stdout=f, check=True, timeout=30)
    return load_suite({"name": "t", "dataset": {"path": out}}, tmp_path).prompts


def _jsonl_shards(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    # the first shard without its last line end: joined by cat, its last row and the next one's first were one line
    (folder / "train-00000-of-00002.jsonl").write_text(json.dumps({"prompt": "first shard, row one"}) + "\n"
                                                       + json.dumps({"prompt": "first shard, row two"}))
    (folder / "train-00001-of-00002.jsonl").write_text(json.dumps({"prompt": "second shard, row one"}) + "\n")
    (folder / "README.md").write_text("# a dataset card\n")
    return folder


@pytest.mark.parametrize("given, says", [
    ("data", "data is a folder of 2 JSON-lines files"),
    ("data/train-*.jsonl", "data/train-*.jsonl is a pattern, matching 2 JSON-lines files"),
], ids=["folder", "pattern"])
def test_json_lines_shards_get_the_line_that_joins_them(tmp_path, given, says):
    _jsonl_shards(tmp_path)
    said = _refusal(tmp_path, given)
    assert said.endswith(f"dataset.path: {tmp_path / says} (train-00000-of-00002.jsonl, train-00001-of-00002.jsonl), "
                         "and the tuner reads one file: give one, or join them (awk 1 "
                         f"{tmp_path / 'data' / 'train-00000-of-00002.jsonl'} "
                         f"{tmp_path / 'data' / 'train-00001-of-00002.jsonl'} > {tmp_path / 'data.jsonl'} writes them as "
                         "one; give that file as dataset.path)"), said
    prompts = _joined(tmp_path, said, "awk", "data.jsonl")
    assert prompts is not None  # awk is POSIX
    assert [p.text for p in prompts] == ["first shard, row one", "first shard, row two", "second shard, row one"]


def test_sharegpt_shards_get_the_line_that_joins_the_lists(tmp_path):
    folder = tmp_path / "sg"
    folder.mkdir()
    (folder / "part-1.json").write_text(json.dumps(CONVERSATIONS[:2]))
    (folder / "part-2.json").write_text(json.dumps(CONVERSATIONS[2:]))
    said = _refusal(tmp_path, "sg")
    assert "sg is a folder of 2 JSON files (part-1.json, part-2.json)" in said and "(jq -s add " in said, said
    prompts = _joined(tmp_path, said, "jq", "sg.json")
    if prompts is not None:
        assert [p.text for p in prompts] == [c["conversations"][0]["value"] for c in CONVERSATIONS]


def test_a_folder_of_no_data_file_is_refused_as_before(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "README.md").write_text("# nothing here\n")
    assert _refusal(tmp_path, "docs").endswith(f"dataset.path: {tmp_path / 'docs'}: is a folder; give a file")
