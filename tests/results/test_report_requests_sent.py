"""The report's workload table says how many of the suite's requests a measurement sends when that is
fewer than it holds, as the workload line does: its lengths are those of the requests sent. QA (qa149):
40 drawn, ``single.prompts: 2`` and a sweep up to C=8 send 8; the row said "40 from dataset ..." beside
the 8 sent requests' lengths. In-process: the report's HTML builder with stored workload statistics."""

from __future__ import annotations

from tuner.results.report_data import ReportData
from tuner.results.report_traffic import traffic_html


def _requests_row(workload: dict) -> str:
    data = ReportData("s", ["single"], "sim", "", None, [], [], [], [], "", [], workload=workload)
    cells = {}

    def table(headers, rows, cls):
        cells.update({r[0]: str(r[1]) for r in rows if cls == "workload"})
        return ""

    traffic_html(data, table)
    return cells["requests"]


SOURCE = {"kind": "dataset", "path": "d.jsonl", "format": "jsonl", "n": 40, "seed": 0, "sha256": "ab" * 32}


def test_the_requests_row_says_how_many_are_sent():
    row = _requests_row({"suite": "s", "source": SOURCE, "requests": 40, "sent": 8, "largest_batch": 8,
                         "single_prompts_sent": 2})
    assert row.startswith("40 from dataset d.jsonl"), row
    assert ", 8 of them sent (the single phase's first 2; a sweep batch of C sends the first C, up to 8)" in row


def test_all_sent_or_stored_before_the_count_says_nothing_more():
    assert "sent" not in _requests_row({"suite": "s", "source": SOURCE, "requests": 8, "sent": 8,
                                        "largest_batch": 8, "single_prompts_sent": 8})
    assert "sent" not in _requests_row({"suite": "s", "source": SOURCE, "requests": 40})  # an older study


def test_a_draw_without_n_says_the_file_order_not_a_seed():
    # without dataset.n every row is drawn in the file's order and the seed chooses nothing (QA qa152:
    # the row said "n=all, seed 0"); with n, the count and the seed that drew them
    every = _requests_row({"suite": "s", "source": {**SOURCE, "n": None, "seed": 0}, "requests": 40})
    assert "(jsonl; every row, in the file's order, sha256 abababababab...)" in every, every
    assert "seed" not in every, every
    assert "(jsonl; n=40, seed 0, sha256" in _requests_row({"suite": "s", "source": SOURCE, "requests": 40})
