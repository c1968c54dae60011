"""A ``dataset.path`` not found where the file meant is there under the path written another way names
it (QA qa152: each was "not found" alone): the path quoted twice (``"'d.jsonl'"``: YAML keeps the inner
quotes as part of the name), a Windows drive path (``C:\\data\\d.jsonl``), Windows' ``\\`` separators with
a folder's name in another case, and a name whose case matches two files (both named, not one)."""

import pytest
from support.dataset_paths import not_found as _not_found
from support.dataset_paths import said as _said

from tuner.config.suite import load_suite

ROW = '{"prompt": "hello there"}\n'


def _reads(tmp_path, there: str) -> None:
    assert [p.text for p in load_suite({"name": "t", "dataset": {"path": there}}, tmp_path).prompts] == ["hello there"]


@pytest.mark.parametrize("given", ["'data/d.jsonl'", '"data/d.jsonl"', " 'data/d.jsonl' "])
def test_a_path_written_with_its_quotes_names_the_file(tmp_path, given):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "d.jsonl").write_text(ROW)
    assert _said(tmp_path, given) == _not_found(tmp_path, given) + (
        "; data/d.jsonl is there (the path is written with its quotes, and YAML keeps them as part of the name): "
        "give it as dataset.path")
    _reads(tmp_path, "data/d.jsonl")


@pytest.mark.parametrize("given", ["C:\\data\\d.jsonl", "c:/data/d.jsonl"])
def test_a_windows_drive_path_is_named_so_with_the_file_of_its_name_here(tmp_path, given):
    (tmp_path / "d.jsonl").write_text(ROW)
    assert _said(tmp_path, given) == _not_found(tmp_path, given) + (
        f"; {given} is a Windows path (drive {given[:2]}), and this machine has no drives: copy the file here and give "
        f"its path here, relative to the suite's folder or from /; d.jsonl is there, in {tmp_path}: give it as "
        "dataset.path")
    (tmp_path / "d.jsonl").unlink()  # no file of its name here: the drive alone is said
    assert _said(tmp_path, given).endswith("relative to the suite's folder or from /")


@pytest.mark.parametrize("given, why", [
    ("Data\\d.jsonl", "folders are separated by / here, not \\, and its path differs in case"),
    ("DATA/D.jsonl", "its path differs in case"),
    ("data\\D.jsonl", "folders are separated by / here, not \\, and its name differs in case"),
])
def test_a_folder_in_another_case_names_the_file(tmp_path, given, why):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "d.jsonl").write_text(ROW)
    assert _said(tmp_path, given) == _not_found(tmp_path, given) + (
        f"; data/d.jsonl is there ({why}, and file names here are case-sensitive): give it as dataset.path")


def test_two_files_differing_in_case_are_both_named(tmp_path):
    (tmp_path / "D.jsonl").write_text(ROW)
    (tmp_path / "d.JSONL").write_text(ROW)
    assert _said(tmp_path, "d.jsonl") == _not_found(tmp_path, "d.jsonl") + (
        "; D.jsonl and d.JSONL are there (their names differ in case, and file names here are case-sensitive): "
        "give the one meant as dataset.path")
    _reads(tmp_path, "D.jsonl")
    _reads(tmp_path, "d.JSONL")
