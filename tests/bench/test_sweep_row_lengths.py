"""A sweep row's ``max_tokens`` in ``tuner bench --json``: the length its requests asked, or None
when a dataset's requests asked their own (the row used to give the first request's)."""
import json

from test_bench_suite import _rec

from tuner.bench.result import SuiteResult


def _sweep(lengths: list[int]) -> SuiteResult:
    recs = [_rec("sweep", f"p{i}", n, 10.0, 11.0 + i, c=len(lengths), index=i) for i, n in enumerate(lengths)]
    return SuiteResult(suite={"name": "t"}, records=recs, complete=True)


def test_a_row_of_one_length_names_it():
    (row,) = _sweep([64, 64, 64]).sweep_rows
    assert row.max_tokens == 64


def test_a_row_of_requests_at_their_own_lengths_names_none():
    res = _sweep([64, 300, 17])
    (row,) = res.sweep_rows
    assert row.max_tokens is None
    # and so in the JSON a user reads, beside the records that keep each request's own
    doc = json.loads(json.dumps(res.to_dict()))
    assert doc["figures"]["sweep"][0]["max_tokens"] is None
    assert sorted(r["max_tokens"] for r in doc["records"]) == [17, 64, 300]
