"""A dataset file ending in NUL bytes alone (its writer stopped by a crash or a full disk: the file system
keeps the length and zeroes what was never written; or a preallocated file) is named so, with the ``tr``
line that writes it without them beside it, its suffix kept. (QA qa188: the JSON-lines file was asked
"it holds NUL bytes: UTF-16 text? save the file as UTF-8", a UTF-8 file; the ShareGPT one was "not valid
JSON (Extra data)" alone.) The line is run as printed (``tr`` reading the file, its output written to the
file named after ``>``) and that file loaded. UTF-16 text without its mark, NULs between its characters,
is still asked so."""

import json
import re
import shlex
import subprocess

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

ROWS = b"".join(json.dumps({"prompt": f"plain prompt number {i}", "max_tokens": 8}).encode() + b"\n" for i in range(3))
SHAREGPT = json.dumps([{"id": f"c{i}", "conversations": [
    {"from": "human", "value": f"Tell me about the sea, number {i}."},
    {"from": "gpt", "value": "The sea is wide and deep, and it rolls on."}]} for i in range(3)]).encode()


def _refusal(tmp_path, name: str, data: bytes) -> str:
    (tmp_path / name).write_bytes(data)
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": name}}, tmp_path)
    return str(err.value)


@pytest.mark.parametrize("name, data, says", [
    ("d.jsonl", ROWS + b"\x00" * 4096, "line 4: not valid JSON (Expecting value); the line holds 4,096 NUL bytes alone"),
    ("d.jsonl", ROWS.rstrip(b"\n") + b"\x00" * 100, "line 3: not valid JSON (Extra data); after its row, the line "
                                                    "holds 100 NUL bytes alone"),
    ("sg.json", SHAREGPT + b"\n" + b"\x00" * 512, "line 2: not valid JSON (Extra data); after its JSON list, the file "
                                                  "holds 512 NUL bytes alone"),
], ids=["a-line-of-nuls", "nuls-after-the-last-row", "sharegpt"])
def test_a_nul_padded_end_is_named_with_the_line_that_drops_it(tmp_path, name, data, says):
    said = _refusal(tmp_path, name, data)
    assert said.startswith(f"{tmp_path / name}: {says}, the end of a file its writer left unfinished"), said
    assert "UTF-16" not in said, said
    found = re.search(r"\((tr .*?) < (.+?) > (.+?) writes the file without them; give that file as dataset\.path", said)
    assert found, said
    words, source, out = shlex.split(found.group(1)), shlex.split(found.group(2)), shlex.split(found.group(3))
    stem, suffix = name.split(".")
    assert words == ["tr", "-d", "\\000"] and source == [str(tmp_path / name)], said
    assert out == [str(tmp_path / f"{stem}.clean.{suffix}")], said
    with open(source[0], "rb") as src, open(out[0], "wb") as dst:
        subprocess.run(words, stdin=src, stdout=dst, check=True, timeout=30)
    prompts = load_suite({"name": "t", "dataset": {"path": f"{stem}.clean.{suffix}"}}, tmp_path).prompts
    assert len(prompts) == 3 and prompts[0].text in ("plain prompt number 0", "Tell me about the sea, number 0.")


def test_utf16_text_without_its_mark_is_still_asked_so(tmp_path):
    said = _refusal(tmp_path, "d.jsonl", ROWS.decode().encode("utf-16-le"))
    assert said.endswith("it holds NUL bytes: UTF-16 text? save the file as UTF-8"), said
