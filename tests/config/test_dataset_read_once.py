"""A dataset file that is not UTF-8 is read once: the pass that finds its first bad byte also counts
the lines before it and keeps the first bytes that say what the file is (QA: the error path opened
the file a second time to count them, which for a file of gigabytes is a second full read and for a
file being rewritten may name another line). The message is as before: the line and the byte, or
what the file is and how to make it readable."""

from __future__ import annotations

import builtins
import gzip
import json

import pytest

import tuner.config.dataset as dataset
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

ROWS = b"".join(json.dumps({"prompt": f"question {i} \u00e9\u4e2d"}, ensure_ascii=False).encode() + b"\n"
                for i in range(40))


def _refusal(tmp_path, monkeypatch, data: bytes, chunk: int) -> tuple[str, int]:
    """The error line for ``data`` as d.jsonl read ``chunk`` bytes at a time, and how often it was opened."""
    path = tmp_path / "d.jsonl"
    path.write_bytes(data)
    opened = []

    def counting_open(file, *args, **kwargs):  # the reader's own open(); every other caller untouched
        if str(file) == str(path):
            opened.append(file)
        return builtins.open(file, *args, **kwargs)

    monkeypatch.setattr(dataset, "_CHUNK", chunk)
    monkeypatch.setattr(dataset, "open", counting_open, raising=False)
    (tmp_path / "s.json").write_text(json.dumps({"name": "t", "dataset": {"path": "d.jsonl"}}))
    with pytest.raises(ConfigError) as info:
        load_suite(str(tmp_path / "s.json"))
    return str(info.value), len(opened)


@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
@pytest.mark.parametrize("where", ["latin-1 row", "cut character", "cut at the end"])
def test_a_bad_byte_is_named_by_its_line_from_one_read(tmp_path, monkeypatch, chunk, where):
    if where == "latin-1 row":  # a whole row in Latin-1 among UTF-8 rows
        data = ROWS + json.dumps({"prompt": "caf\u00e9"}, ensure_ascii=False).encode("latin-1") + b"\n" + ROWS
        bad = len(ROWS) + data[len(ROWS):].index(b"\xe9")
    elif where == "cut character":  # a 3-byte character missing its last byte mid-file
        cut = ROWS.index("\u4e2d".encode(), len(ROWS) // 2) + 2
        data, bad = ROWS[:cut] + ROWS[cut + 1:], cut - 2
    else:  # the file ends inside a character: found by the decoder's final call
        data = ROWS + "\u4e2d".encode()[:2]
        bad = len(ROWS)
    message, opens = _refusal(tmp_path, monkeypatch, data, chunk)
    line = data[:bad].count(b"\n") + 1
    said = f"line {line}: not UTF-8 text (byte {bad}); save the file as UTF-8"
    assert message == f"{tmp_path / 'd.jsonl'}: {said}"
    assert opens == 1, opens


@pytest.mark.parametrize("data, says", [
    (gzip.compress(ROWS), "gzip-compressed, not UTF-8 text; decompress it first (gunzip -c {path} > "),
    ("\ufeff".encode("utf-16-le").join([b"", ROWS.decode().encode("utf-16-le")]),
     "UTF-16 text, not UTF-8 text; save it as UTF-8 (iconv -f UTF-16 -t UTF-8 {path} > "),
    (b"BZh91AY&SY" + bytes(range(128, 256)), "bzip2-compressed, not UTF-8 text; decompress it first"),
], ids=["gzip", "utf-16", "bzip2"])
def test_what_the_file_is_is_said_from_one_read(tmp_path, monkeypatch, data, says):
    # a 7-byte chunk: the 10-byte bzip2 mark spans two of them
    message, opens = _refusal(tmp_path, monkeypatch, data, 7)
    # the command names the file as the line does: it runs from the folder the user is in (QA: its bare name)
    assert message.startswith(f"{tmp_path / 'd.jsonl'}: {says.format(path=tmp_path / 'd.jsonl')}"), message
    assert opens == 1, opens
