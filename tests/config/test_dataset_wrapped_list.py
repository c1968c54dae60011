"""A ShareGPT ``.json`` that is a JSON object holding its entries as a list under a key (``{"data": [...]}``,
as a Hugging Face dataset's JSON is read with ``field="data"``; ``{"train": [...], "test": [...]}``) is
refused naming the key, with the ``jq`` line that writes the list where the layout wants it. (QA qa188: it
was told ``set format: jsonl if it is one JSON object per line``, and read so was refused again, ``line 1:
data: unknown key``.) The line is run with the real ``jq`` where it is installed, its output written to
the file it names after ``>``, and that file loaded; without jq its words are checked."""

import json
import re
import shlex
import shutil
import subprocess

import pytest
import yaml
from click.testing import CliRunner

from tuner.cli import cli
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

JQ = shutil.which("jq")
CONVERSATIONS = [{"id": f"c{i}", "conversations": [
    {"from": "human", "value": f"Tell me about the sea, number {i}."},
    {"from": "gpt", "value": "The sea is wide and deep, and it rolls on and on."}]} for i in range(3)]
ROWS = [{"prompt": f"plain prompt number {i}", "max_tokens": 8} for i in range(3)]


def _refusal(tmp_path, name: str, data) -> str:
    (tmp_path / name).write_text(json.dumps(data, indent=2))
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": name}}, tmp_path)
    return str(err.value)


def _converted(tmp_path, said: str, name: str, out: str, filter_words: list[str]):
    """The requests the refusal's jq line makes (run as the shell splits it, its output written to
    ``out`` after '>'), or None without jq."""
    found = re.search(r"\((jq .*?) writes (?:it|them) so; give that file as dataset\.path\)$", said)
    assert found, said
    words = shlex.split(found.group(1))
    assert words == ["jq", *filter_words, str(tmp_path / name), ">", str(tmp_path / out)], words
    if JQ is None:
        return None
    with open(tmp_path / out, "w") as f:
        subprocess.run([JQ, *words[1:-2]], stdout=f, check=True, timeout=30)
    return load_suite({"name": "t", "dataset": {"path": out}}, tmp_path).prompts


@pytest.mark.parametrize("key, wrapped, filter_words", [
    ("data", {"version": "1.0", "data": CONVERSATIONS}, [".data"]),
    ("train", {"train": CONVERSATIONS, "test": CONVERSATIONS[:1]}, [".train"]),
    ("my data", {"my data": CONVERSATIONS}, ['."my data"']),
], ids=["data", "splits", "a-key-with-a-blank"])
def test_conversations_under_a_key_are_named_with_the_jq_line_that_unwraps_them(tmp_path, key, wrapped,
                                                                                filter_words):
    said = _refusal(tmp_path, "sg.json", wrapped)
    assert said.startswith(f"{tmp_path / 'sg.json'}: a JSON object holding its conversations as a list under "
                           f"{key}"), said
    assert "set format" not in said, said
    if len(wrapped) > 1 and "test" in wrapped:
        assert "(and test: one list a file)" in said, said
    out = f"sg.{key.replace(' ', '_')}.json"  # a .json: read as sharegpt again, the list itself
    prompts = _converted(tmp_path, said, "sg.json", out, filter_words)
    if prompts is not None:
        assert [p.text for p in prompts] == [c["conversations"][0]["value"] for c in CONVERSATIONS]


def test_request_rows_under_a_key_are_written_one_a_line(tmp_path):
    said = _refusal(tmp_path, "rows.json", {"data": ROWS})
    assert said.startswith(f"{tmp_path / 'rows.json'}: a JSON object holding its rows as a list under data, "), said
    prompts = _converted(tmp_path, said, "rows.json", "rows.lines.jsonl", ["-c", ".data[]"])
    if prompts is not None:
        assert [(p.text, p.max_tokens) for p in prompts] == [(r["prompt"], r["max_tokens"]) for r in ROWS]


def test_the_refusal_is_one_line_exit_2_and_nothing_written(tmp_path):
    (tmp_path / "sg.json").write_text(json.dumps({"data": CONVERSATIONS}))
    suite = {"name": "s", "dataset": {"path": "sg.json"}, "single": {"prompts": 1, "repeats": 1},
             "sweep": {"concurrencies": [2]}, "warmup": {"requests": 0}, "timeout_s": 30}
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(suite))
    (tmp_path / "study.yaml").write_text(yaml.safe_dump({
        "name": "ds", "server": {"backend": "sim", "model_path": "m", "draft_model_path": "d", "sim": {"speedup": 50}},
        "bench": {"suite": "suite.yaml"}, "objectives": ["single_speedup", "speedup@2"]}))
    before = sorted(p.name for p in tmp_path.iterdir())
    r = CliRunner().invoke(cli, ["study", "create", str(tmp_path / "study.yaml")])
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1, (r.exit_code, lines)
    assert lines[0].startswith(f"error: {tmp_path / 'sg.json'}: a JSON object holding its conversations"), lines
    assert sorted(p.name for p in tmp_path.iterdir()) == before
