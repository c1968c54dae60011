"""A ``dataset.path`` not found, where the file meant is there under a path that differs by Windows'
``\\`` separators, blanks around it (quoted YAML keeps them; the error line does not show a trailing
one) or the case of its name (a file copied from macOS or Windows), names that file (QA: each was
"not found" alone, the path looking right)."""

import pytest
from support.dataset_paths import not_found as _not_found
from support.dataset_paths import said as _said

from tuner.config.suite import load_suite


@pytest.mark.parametrize("given, there, why", [
    ("data\\requests.jsonl", "data/requests.jsonl", "folders are separated by / here, not \\"),
    ("data/requests.jsonl ", "data/requests.jsonl", "the path has blanks around it"),
    ("data/Requests.JSONL", "data/requests.jsonl",
     "its name differs in case, and file names here are case-sensitive"),
])
def test_a_near_miss_names_the_file_that_is_there(tmp_path, given, there, why):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "requests.jsonl").write_text('{"prompt": "hello there"}\n')
    assert _said(tmp_path, given) == _not_found(tmp_path, given) + f"; {there} is there ({why}): give it as dataset.path"
    # the path named reads
    assert [p.text for p in load_suite({"name": "t", "dataset": {"path": there}}, tmp_path).prompts] == ["hello there"]


def test_an_absolute_path_is_named_absolute(tmp_path):
    (tmp_path / "requests.jsonl").write_text('{"prompt": "hello there"}\n')
    given = str(tmp_path / "REQUESTS.jsonl")
    assert _said(tmp_path, given).endswith(f"; {tmp_path / 'requests.jsonl'} is there (its name differs in case, and "
                                           "file names here are case-sensitive): give it as dataset.path")


def test_no_file_near_says_not_found_alone(tmp_path):
    (tmp_path / "requests.jsonl").mkdir()  # a folder of that name is no file meant
    (tmp_path / "other.jsonl").write_text('{"prompt": "hello there"}\n')
    assert _said(tmp_path, "Requests.jsonl") == _not_found(tmp_path, "Requests.jsonl")


def test_a_name_written_with_decomposed_accents_says_so_and_how_to_rename(tmp_path):
    # a file named on macOS (accents as combining marks, NFD), the path typed here (composed, NFC):
    # the two print alike (QA: "not found", the path looking right)
    import shlex
    import unicodedata

    on_disk = unicodedata.normalize("NFD", "dätä.jsonl")
    typed = unicodedata.normalize("NFC", "dätä.jsonl")
    assert on_disk != typed
    (tmp_path / on_disk).write_text('{"prompt": "hello there"}\n')
    command = f"mv -- {shlex.quote(str(tmp_path / on_disk))} {shlex.quote(str(tmp_path / typed))}"
    assert _said(tmp_path, typed) == _not_found(tmp_path, typed) + (
        "; 'da\\u0308ta\\u0308.jsonl' is there, the same name with its accents written as other code points (a file "
        f"named on macOS: Unicode NFD): rename the file ({command})")
    # the command given makes the path read
    (tmp_path / on_disk).rename(tmp_path / typed)
    assert [p.text for p in load_suite({"name": "t", "dataset": {"path": typed}}, tmp_path).prompts] == ["hello there"]
