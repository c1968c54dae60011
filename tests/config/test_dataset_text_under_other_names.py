"""Prompts written a line each in a file not named ``.txt`` (``prompts.jsonl``, named for being lines;
``prompts`` with no suffix; ``prompts.md``; a ``.json``) are named a text file, with the ``jq`` line that
makes each line that is not blank a prompt, as a ``.txt`` file's refusal gives it. (QA qa188: each was
``line 1: not valid JSON (Expecting value)``, with no word of text and no fix.) The line is run with the
real ``jq`` where it is installed, its output written to the file it names after ``>``, and that file
loaded; without jq its words are checked. A file of JSON lines broken on line 1 is not taken for text."""

import json
import re
import shlex
import shutil
import subprocess

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

JQ = shutil.which("jq")
LINES = ["Write a haiku about autumn leaves.", "", "Explain quicksort to a child.", "\u5199\u4e00\u9996\u8bd7\u3002"]


def _refusal(tmp_path, name: str, data: str, **dataset) -> str:
    (tmp_path / name).write_text(data, encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": name, **dataset}}, tmp_path)
    return str(err.value)


@pytest.mark.parametrize("name, out, dataset", [
    ("prompts.jsonl", "prompts.lines.jsonl", {}),
    ("prompts", "prompts.lines.jsonl", {}),
    ("my prompts.md", "my prompts.lines.jsonl", {}),
    ("prompts.json", "prompts.lines.jsonl", {}),
    ("prompts.jsonl", "prompts.lines.jsonl", {"format": "custom"}),
], ids=["jsonl", "no-suffix", "md", "json", "custom"])
def test_prompts_a_line_are_named_text_with_the_line_that_makes_them_requests(tmp_path, name, out, dataset):
    said = _refusal(tmp_path, name, "\n".join(LINES) + "\n", **dataset)
    assert said.startswith(f"{tmp_path / name}: text, not JSON: line 1 starts with a word"), said
    found = re.search(r"\((jq .*?) writes them so; give that file as dataset\.path\)$", said)
    assert found, said
    words = shlex.split(found.group(1))
    assert words[:3] == ["jq", "-R", "-c"] and words[-3:] == [str(tmp_path / name), ">", str(tmp_path / out)], words
    if JQ is None:
        return
    with open(tmp_path / out, "w") as f:
        subprocess.run([JQ, *words[1:-2]], stdout=f, check=True, timeout=30)
    prompts = load_suite({"name": "t", "dataset": {"path": out}}, tmp_path).prompts
    assert [p.text for p in prompts] == [t for t in LINES if t]


@pytest.mark.parametrize("first", ['{"prompt": }', '["a", "b"]', "1. Write a poem"], ids=["object", "list", "number"])
def test_a_first_line_that_starts_as_json_is_not_taken_for_text(tmp_path, first):
    said = _refusal(tmp_path, "d.jsonl", first + "\n" + json.dumps({"prompt": "hi there"}) + "\n")
    assert "text, not JSON" not in said and "line 1" in said, said
