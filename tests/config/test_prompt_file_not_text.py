"""A prompt ``file`` that is no UTF-8 text by its first bytes (gzip'd, UTF-16 as Windows Notepad's
"Unicode" saves it) is named as what it is, with the command that makes it readable and the key to give
its result as, as a dataset file is (QA qa207: a gzip'd prompt file was "not UTF-8 text (byte 1); save
the file as UTF-8", which no editor does to a gzip file). A stray byte in a text file is named by its
offset, as before; a study with such an inline suite is refused before anything is written."""

import gzip
import shlex
import subprocess

import pytest
from support.inline_suite_study import refused_create

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

SUITE = "name: s\nprompts:\n  - {name: a, file: %s}\nsingle: {lengths: [16], repeats: 1}\n"


def _refusal(tmp_path, name: str, data: bytes) -> str:
    (tmp_path / name).write_bytes(data)
    (tmp_path / "s.yaml").write_text(SUITE % name)
    with pytest.raises(ConfigError) as err:
        load_suite(tmp_path / "s.yaml")
    return str(err.value)


def test_a_gzipped_prompt_file_is_told_to_be_decompressed(tmp_path):
    path = tmp_path / "p.txt.gz"
    assert _refusal(tmp_path, path.name, gzip.compress(b"Write quicksort in Python.")) == (
        f"{tmp_path / 's.yaml'}: prompts[0].file: cannot read {path}: gzip-compressed, not UTF-8 text; decompress "
        f"it first (gunzip -k {shlex.quote(str(path))}) and give the file it holds as the prompt's file")


def test_a_utf16_prompt_file_gets_the_iconv_line_that_writes_a_utf8_copy(tmp_path):
    path = tmp_path / "p.txt"
    message = _refusal(tmp_path, path.name, "Write quicksort in Python.".encode("utf-16"))
    assert message.endswith(
        f"cannot read {path}: UTF-16 text, not UTF-8 text; save it as UTF-8 (iconv -f UTF-16 -t UTF-8 "
        f"{shlex.quote(str(path))} > {shlex.quote(str(tmp_path / 'p.utf8.txt'))} writes it so; give that file as "
        "the prompt's file)"), message
    # the line's command makes the file the suite reads
    with open(tmp_path / "p.utf8.txt", "wb") as out:
        subprocess.run(["iconv", "-f", "UTF-16", "-t", "UTF-8", str(path)], stdout=out, check=True)
    (tmp_path / "s.yaml").write_text(SUITE % "p.utf8.txt")
    assert load_suite(tmp_path / "s.yaml").prompts[0].text == "Write quicksort in Python."


def test_a_stray_byte_is_named_by_its_offset(tmp_path):
    path = tmp_path / "p.txt"
    assert _refusal(tmp_path, path.name, "café".encode("latin-1")) == (
        f"{tmp_path / 's.yaml'}: prompts[0].file: cannot read {path}: not UTF-8 text (byte 3); save the file as UTF-8")


def test_a_study_with_a_gzipped_prompt_file_is_refused_and_nothing_written(tmp_path):
    (tmp_path / "p.txt.gz").write_bytes(gzip.compress(b"Write quicksort in Python."))
    line = refused_create(
        tmp_path, "gz", "{name: gz, prompts: [{name: a, file: p.txt.gz}], single: {lengths: [16]}}")
    assert line.startswith(
        f"error: {tmp_path / 'study.yaml'}: bench.suite.prompts[0].file: cannot read {tmp_path / 'p.txt.gz'}: "
        "gzip-compressed, not UTF-8 text; decompress it first"), line
