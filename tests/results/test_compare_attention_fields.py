"""`tuner study compare`'s record says each study's attention decision in structured fields
(``hardware.attention_stored``, ``hardware.attention_pinned_by_tuner``) beside the words it always
carried (``hardware.attention_decision``, kept: added, not renamed); the table and the HTML page
render from the fields: the page's cell was parsed back out of the words (``split(': ')``)."""

from __future__ import annotations

import json

from support.older_study import created_older_or_newer

from tuner.config.study import load_study
from tuner.engine.study import open_study
from tuner.results.compare import compare_studies
from tuner.results.compare_report import summary_rows, write_compare_page


def _study(tmp_path, name: str, *, older: bool, args: str = ""):
    path = created_older_or_newer(tmp_path, name, older=older, args=args)
    return open_study(name, load_study(path).storage)


def _cell(cmp) -> list:
    return next(row for row in summary_rows(cmp) if row[0] == "attention backend")[1:]


def test_the_decision_is_in_fields_and_the_cells_are_drawn_from_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    new, old = _study(tmp_path, "new", older=False), _study(tmp_path, "old", older=True)
    own = _study(tmp_path, "own", older=True, args="attention_backend: triton")
    cmp = json.loads(json.dumps(compare_studies(new, old)))  # as `-f json` prints it
    a, b = cmp["a"]["hardware"], cmp["b"]["hardware"]
    assert (a["attention_backend"], a["attention_stored"], a["attention_pinned_by_tuner"]) == ("fa3", True, None)
    assert (b["attention_backend"], b["attention_stored"], b["attention_pinned_by_tuner"]) == (
        "flashinfer", False, True)
    # the words stay, as before
    assert (a["attention_decision"], b["attention_decision"]) == ("stored", "not stored (older study): the tuner's pin")
    assert _cell(cmp) == ["fa3", "flashinfer (not stored: the tuner's pin)"]
    mine = compare_studies(own, new)["a"]["hardware"]
    assert (mine["attention_backend"], mine["attention_stored"], mine["attention_pinned_by_tuner"]) == (
        "triton", False, False)
    assert mine["attention_decision"] == "not stored (older study): its own"

    # the cells follow the fields, whatever the words say
    for hw in (a, b):
        hw["attention_decision"] = "reworded: since"
    assert _cell(cmp) == ["fa3", "flashinfer (not stored: the tuner's pin)"]
    b["attention_pinned_by_tuner"] = False
    assert _cell(cmp) == ["fa3", "flashinfer (not stored: its own)"]
    page = write_compare_page(cmp, tmp_path / "cmp.html").read_text()
    assert "flashinfer (not stored: its own)" in page and "reworded" not in page
