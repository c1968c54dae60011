"""A spreadsheet workbook given as the dataset (``.xlsx``, ``.xlsm``, ``.ods``: zip archives of XML)
is named so, with the pandas line that converts its sheet to JSON lines (QA: an ``.xlsx`` of prompts
was "a zip archive ...: extract the file from it first (unzip FILE)", which gives XML parts, no
rows). A ``.zip`` is still told to be unzipped."""

import zipfile

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def _zip(path) -> None:
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.writestr("[Content_Types].xml", '<?xml version="1.0"?><Types/>' * 20)
        z.writestr("xl/worksheets/sheet1.xml", "<worksheet><sheetData/></worksheet>" * 20)


def _refusal(tmp_path, name: str) -> str:
    _zip(tmp_path / name)
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": name}}, tmp_path)
    return str(err.value)


@pytest.mark.parametrize("name", ["prompts.xlsx", "Prompts.XLSM", "prompts.ods"])
def test_a_workbook_is_named_with_the_pandas_line_that_converts_it(tmp_path, name):
    path = tmp_path / name
    assert _refusal(tmp_path, name) == (
        f"{path}: a spreadsheet workbook (a zip archive of XML), not UTF-8 text; "
        f"convert its sheet to JSON lines first (python -c \"import pandas as p; p.read_excel('{path}').to_json("
        f"'{path}.jsonl', orient='records', lines=True, force_ascii=False)\", its columns named prompt and "
        "max_tokens) and give that file as dataset.path")


def test_a_zip_archive_is_still_told_to_be_unzipped(tmp_path):
    assert _refusal(tmp_path, "d.zip").endswith(
        f"{tmp_path / 'd.zip'}: a zip archive, not UTF-8 text; extract the file from it first "
        f"(unzip {tmp_path / 'd.zip'}) and give that file as dataset.path")
