"""The command a refused dataset's line gives makes a file the tuner reads: run as printed, from the
folder the user is in, it writes the file the line says to give, and `tuner study create` takes that
file. (QA qa188: the UTF-16 line's `iconv -f UTF-16 -t UTF-8 d.jsonl` printed the text to the terminal
and wrote nothing; on gzip'd bytes saved as `d.jsonl`, a download kept under the name it unpacks to,
`gunzip -k d.jsonl` stopped with "unknown suffix -- ignored", and bunzip2, unxz and unzstd alike.)"""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import re
import shlex
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tuner.cli import cli

ROWS = b"".join(json.dumps({"prompt": f"plain prompt number {i}", "max_tokens": 8}).encode() + b"\n" for i in range(3))
SHAREGPT = json.dumps([{"id": f"c{i}", "conversations": [
    {"from": "human", "value": f"Tell me about the sea, number {i}."},
    {"from": "gpt", "value": "The sea is wide and deep, and it rolls on."}]} for i in range(3)]).encode()
SUITE = {"name": "s", "single": {"prompts": 1, "repeats": 1}, "sweep": {"concurrencies": [2]},
         "warmup": {"requests": 0}, "timeout_s": 30}
STUDY = {"name": "ds", "server": {"backend": "sim", "model_path": "m", "draft_model_path": "d",
                                  "sim": {"speedup": 50}},
         "bench": {"suite": "suite.yaml"}, "objectives": ["single_speedup", "speedup@2"]}


def create(folder: Path, name: str) -> tuple[int, list[str]]:
    """`tuner study create` of a study whose suite reads ``name``: exit code and stderr lines."""
    (folder / "suite.yaml").write_text(yaml.safe_dump({**SUITE, "dataset": {"path": name}}))
    (folder / "study.yaml").write_text(yaml.safe_dump(STUDY))
    r = CliRunner().invoke(cli, ["study", "create", str(folder / "study.yaml")])
    return r.exit_code, r.stderr.strip().splitlines()


def command_of(line: str) -> tuple[list[str], Path]:
    """The command in a refusal's parentheses, ``TOOL ... FILE > OUT writes ...``: its words and OUT.
    (Split here, not given to a shell: the test runs what the line says, a shell's redirection by hand.)"""
    found = re.search(r"\((\S+ .*?) > (.+?) writes ", line)
    assert found, f"no command writing a file in: {line}"
    return shlex.split(found.group(1)), Path(shlex.split(found.group(2))[0])


def run_as_printed(tmp_path: Path, line: str) -> Path:
    argv, out = command_of(line)
    with open(out, "wb") as f:
        subprocess.run(argv, stdout=f, check=True, timeout=60)
    return out


@pytest.mark.parametrize("name, data", [
    ("d.jsonl", ROWS.decode().encode("utf-16")),
    ("sg.json", SHAREGPT.decode().encode("utf-16")),
    ("d.jsonl", ROWS.decode().encode("utf-32")),
], ids=["utf-16-jsonl", "utf-16-sharegpt", "utf-32-jsonl"])
def test_the_iconv_line_writes_a_utf8_file_that_is_read(tmp_path, name, data):
    (tmp_path / name).write_bytes(data)
    code, lines = create(tmp_path, name)
    assert code == 2 and len(lines) == 1, (code, lines)
    out = run_as_printed(tmp_path, lines[0])
    # beside the given file, its suffix kept: a ShareGPT .json is read as one again
    assert out.parent == tmp_path and out.suffix == Path(name).suffix and out != tmp_path / name, out
    assert lines[0].endswith("give that file as dataset.path)"), lines
    assert out.read_bytes().removeprefix(b"\xef\xbb\xbf") == (SHAREGPT if name.endswith(".json") else ROWS)
    code, lines = create(tmp_path, out.name)
    assert code == 0, lines


@pytest.mark.parametrize("name, data", [
    ("d.jsonl", gzip.compress(ROWS)),
    ("sg.json", gzip.compress(SHAREGPT)),
], ids=["jsonl", "sharegpt"])
def test_the_gunzip_line_unpacks_a_file_named_without_gz(tmp_path, name, data):
    (tmp_path / name).write_bytes(data)
    code, lines = create(tmp_path, name)
    assert code == 2 and len(lines) == 1, (code, lines)
    assert "gzip-compressed, not UTF-8 text" in lines[0], lines
    out = run_as_printed(tmp_path, lines[0])
    assert out.parent == tmp_path and out.suffix == Path(name).suffix and out != tmp_path / name, out
    code, lines = create(tmp_path, out.name)
    assert code == 0, lines


@pytest.mark.parametrize("compress, tool", [(bz2.compress, "bunzip2"), (lzma.compress, "unxz")],
                         ids=["bzip2", "xz"])
def test_other_unpackers_write_to_a_named_file_when_the_suffix_is_not_theirs(tmp_path, compress, tool):
    # bunzip2 would write d.jsonl.out, unxz would refuse the name: the command writes its standard output
    (tmp_path / "d.jsonl").write_bytes(compress(ROWS))
    code, lines = create(tmp_path, "d.jsonl")
    assert code == 2 and len(lines) == 1, (code, lines)
    argv, out = command_of(lines[0])
    assert argv == [tool, "-c", str(tmp_path / "d.jsonl")] and out == tmp_path / "d.decompressed.jsonl", lines


def test_a_file_named_with_the_tools_suffix_keeps_the_command_that_keeps_it(tmp_path):
    # d.jsonl.gz: gunzip -k writes d.jsonl beside it, as the line has said since QA qa134
    (tmp_path / "d.jsonl.gz").write_bytes(gzip.compress(ROWS))
    code, lines = create(tmp_path, "d.jsonl.gz")
    assert code == 2 and lines[0].endswith(f"(gunzip -k {tmp_path / 'd.jsonl.gz'}) and give the file it holds as "
                                           "dataset.path"), lines
