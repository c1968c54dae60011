"""A dataset file over the size limit is refused with the command that writes a part of it, each row
whole, beside it (QA qa188: a 2 GiB export was told "over the 1 GiB limit for this kind of file; check
the path", and the path was right). JSON lines: ``head -n N``, N about half the limit by the length of
its first lines; a ShareGPT list, one JSON document: jq's streaming parser, its first conversations one a
line, read with ``format: custom``. The limit is lowered here (the module's ``MAX_DATASET_BYTES``) so the
files stay small; each command is run as printed (jq where it is installed; without it its words are
checked) and its file loaded."""

import json
import re
import shlex
import shutil
import subprocess

import pytest

import tuner.config.dataset as dataset
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

LIMIT = 64 * 1024
JQ = shutil.which("jq")


def _refusal(tmp_path, name: str) -> str:
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": name}}, tmp_path)
    return str(err.value)


def _run(words: list[str], out) -> None:
    """``words`` as the line gives them (one command, or two joined by ``|``), stdout to ``out``."""
    with open(out, "wb") as f:
        if "|" not in words:
            subprocess.run(words, stdout=f, check=True, timeout=30)
            return
        cut = words.index("|")
        first = subprocess.Popen(words[:cut], stdout=subprocess.PIPE)
        try:
            subprocess.run(words[cut + 1:], stdin=first.stdout, stdout=f, check=True, timeout=30)
        finally:
            first.stdout.close()
            first.wait(timeout=30)


def test_json_lines_over_the_limit_get_the_head_that_fits(tmp_path, monkeypatch):
    monkeypatch.setattr(dataset, "MAX_DATASET_BYTES", LIMIT)
    rows = [json.dumps({"prompt": f"request {i}: " + "word " * 40, "max_tokens": 8}) + "\n" for i in range(600)]
    (tmp_path / "d.jsonl").write_text("".join(rows))
    said = _refusal(tmp_path, "d.jsonl")
    assert "check the path" not in said, said
    found = re.search(r"over the 64 KiB a dataset file may be; give a part of it: its first rows \((head .*?) > (.+?) "
                      r"writes ([\d,]+) of them", said)
    assert found, said
    words, out = shlex.split(found.group(1)), tmp_path / "d.head.jsonl"
    assert words[:2] == ["head", "-n"] and words[3:] == [str(tmp_path / "d.jsonl")] and \
        shlex.split(found.group(2)) == [str(out)], said
    assert int(words[2]) == int(found.group(3).replace(",", ""))
    _run(words, out)
    assert 0 < out.stat().st_size <= LIMIT
    prompts = load_suite({"name": "t", "dataset": {"path": out.name}}, tmp_path).prompts
    assert [p.text for p in prompts] == [json.loads(r)["prompt"] for r in rows[:int(words[2])]]


def test_a_sharegpt_list_over_the_limit_gets_its_first_conversations_streamed(tmp_path, monkeypatch):
    monkeypatch.setattr(dataset, "MAX_DATASET_BYTES", LIMIT)
    convs = [{"id": str(i), "conversations": [{"from": "human", "value": f"Tell me about the sea, number {i}."},
                                              {"from": "gpt", "value": "It is wide and deep. " * 10}]}
             for i in range(400)]
    (tmp_path / "sg.json").write_text(json.dumps(convs))
    said = _refusal(tmp_path, "sg.json")
    found = re.search(r"its first conversations one a line \((jq .*?) > (.+?) writes ([\d,]+) of them so, some half "
                      r"that size by its first ones, without holding the file; give that file as dataset\.path with "
                      r"format: custom", said)
    assert found, said
    words, out = shlex.split(found.group(1)), tmp_path / "sg.head.jsonl"
    assert words[:-1] == ["jq", "-cn", "--stream", "fromstream(1|truncate_stream(inputs))", str(tmp_path / "sg.json"),
                          "|", "head", "-n"] and shlex.split(found.group(2)) == [str(out)], said
    assert int(words[-1]) == int(found.group(3).replace(",", "")) < len(convs)
    if JQ is None:
        return
    _run(words, out)
    got = load_suite({"name": "t", "dataset": {"path": out.name, "format": "custom"}}, tmp_path).prompts
    # the same requests the sharegpt layout draws from the whole file, read under the real limit
    monkeypatch.setattr(dataset, "MAX_DATASET_BYTES", 1 << 30)
    whole = load_suite({"name": "t", "dataset": {"path": "sg.json"}}, tmp_path).prompts
    assert [(p.name, p.text, p.max_tokens) for p in got] == [(p.name, p.text, p.max_tokens)
                                                             for p in whole[:int(words[-1])]]
    assert 0 < out.stat().st_size <= LIMIT
