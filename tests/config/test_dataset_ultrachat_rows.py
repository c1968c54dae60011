"""UltraChat's original rows (stingning/ultrachat, on which EAGLE drafts are trained: ``{"id", "data":
[TEXT, TEXT, ...]}``, the turns as texts, the user's first) are named so, as JSON lines and as a JSON
list, with the ``jq`` line that makes each one a line of SGLang's custom layout, whose reader pairs the
first two turns as ShareGPT's (the prompt, and the reply's length as the output length). (QA qa188: the
lines were ``data: unknown key``, the list ``[0]: expected {id, conversations: ...}``, neither with a
fix.) The line is run with the real ``jq`` where it is installed, its output written to the file it names
after ``>``, and that file loaded with ``format: custom``; without jq its words are checked."""

import json
import re
import shlex
import shutil
import subprocess

import pytest

from tuner.config.dataset import estimate_tokens
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

JQ = shutil.which("jq")
ROWS = [{"id": str(i), "data": [f"How do tides work, question {i}?", "Tides are the rise and fall of the sea, "
                                "caused by the moon's pull." * (i + 1), "And the sun?", "It pulls too."]}
        for i in range(3)]


def _refusal(tmp_path, name: str, data: str, **dataset) -> str:
    (tmp_path / name).write_text(data)
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": name, **dataset}}, tmp_path)
    return str(err.value)


@pytest.mark.parametrize("name, data, dataset, says, jq_filter", [
    ("u.jsonl", "".join(json.dumps(r) + "\n" for r in ROWS), {}, "line 1: data: an UltraChat row",
     "{id, conversations: [.data[] | {content: .}]}"),
    ("u.jsonl", "".join(json.dumps(r) + "\n" for r in ROWS), {"format": "custom"},
     "line 1: expected {conversations: [{role, content}, ...]}; got data, UltraChat's turns",
     "{id, conversations: [.data[] | {content: .}]}"),
    ("u.json", json.dumps(ROWS), {}, "[0]: expected {id, conversations: [{from, value}, ...]}; got data, UltraChat's",
     ".[] | {id, conversations: [.data[] | {content: .}]}"),
], ids=["lines", "lines-as-custom", "list"])
def test_ultrachat_rows_get_the_line_that_makes_them_custom_conversations(tmp_path, name, data, dataset, says,
                                                                           jq_filter):
    said = _refusal(tmp_path, name, data, **dataset)
    assert said.startswith(f"{tmp_path / name}: {says}"), said
    found = re.search(r"\((jq .*?) writes them so; give that file as dataset\.path with format: custom\)$", said)
    assert found, said
    words = shlex.split(found.group(1))
    out = tmp_path / "u.lines.jsonl"
    assert words == ["jq", "-c", jq_filter, str(tmp_path / name), ">", str(out)], words
    if JQ is None:
        return
    with open(out, "w") as f:
        subprocess.run([JQ, *words[1:-2]], stdout=f, check=True, timeout=30)
    prompts = load_suite({"name": "t", "dataset": {"path": out.name, "format": "custom"}}, tmp_path).prompts
    # the first turn sent, the second's length the output length, each named by its id
    assert [(p.name, p.text, p.max_tokens) for p in prompts] == [
        (r["id"], r["data"][0], estimate_tokens(r["data"][1])) for r in ROWS]
