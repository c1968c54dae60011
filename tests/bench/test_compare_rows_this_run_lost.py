"""`tuner bench --compare`: a row whose every request failed in this run is out of this run's "all
(mean)", so it is out of the baseline's figure on that line too (QA: a server as fast as its baseline,
1.00x on the row it answered, read 1.19x on "all (mean)": this run's mean of the fast row against the
baseline's mean of the fast and the slow one, whose requests failed here with HTTP 400)."""

from tuner.bench import SuiteResult
from tuner.bench.records import RequestRecord
from tuner.cli.bench_tables import print_result


def _single(prompt: str, repeat: int, seconds: float | None) -> RequestRecord:
    """A single request of 64 tokens answered in ``seconds`` (None: it failed)."""
    start = 10.0 * repeat + (5.0 if prompt == "slow" else 0.0)
    if seconds is None:
        return RequestRecord("single", prompt, 64, repeat, start_s=start, end_s=start + 0.01, ok=False,
                             error_kind="http", http_status=400, error="HTTP 400: over the context length")
    return RequestRecord("single", prompt, 64, repeat, start_s=start, end_s=start + seconds, ok=True,
                         completion_tokens=64, finish_reason="length", output_text="x")


def _result(slow_answered: bool) -> SuiteResult:
    records = [_single("fast", r, 1.0) for r in range(2)]
    records += [_single("slow", r, 2.0 if slow_answered else None) for r in range(2)]
    return SuiteResult(suite={"name": "s"}, base_url="http://127.0.0.1:1", api="generate", stream=False,
                       records=records, complete=True)


def _total_row(out: str) -> list[str]:
    line = next(ln for ln in out.splitlines() if "all (mean)" in ln)
    return [cell.strip() for cell in line.strip("│ ").split("│")]


def test_the_total_speedup_compares_the_rows_both_measured(capsys):
    base, now = _result(slow_answered=True), _result(slow_answered=False)
    assert base.single_tok_per_s == 48.0 and now.single_tok_per_s == 64.0  # 64 and 32 tok/s; 64 alone
    print_result(now, base)
    out = capsys.readouterr().out
    fast = next(ln for ln in out.splitlines() if ln.startswith("│ fast"))
    assert fast.rstrip(" │").endswith("64.0 │ 1.00x")
    # tok/s, cv, accept, failed, base, speedup: the baseline's fast row, as this run's mean has it
    assert _total_row(out)[2:] == ["64.0", "0.0%", "-", "2", "64.0", "1.00x"]


def test_a_complete_run_compares_the_whole_means_as_before(capsys):
    base = _result(slow_answered=True)
    print_result(base, base)
    assert _total_row(capsys.readouterr().out)[-2:] == ["48.0", "1.00x"]
