"""TTFT in model time on a sped-up server: the wall time outside the server's clock (loopback HTTP)
is counted as it is, as for the whole request's latency, not multiplied by the speedup."""
import pytest

from tuner.bench.records import RequestRecord
from tuner.bench.result import SuiteResult

SCALE = 40.0


def _streamed(ttft: float, wall: float, server: float | None, index: int = 0) -> RequestRecord:
    return RequestRecord("sweep", "p", 64, concurrency=2, index=index, start_s=0.0, end_s=wall, ok=True,
                         completion_tokens=64, server_latency_s=server, ttft_s=ttft)


def test_the_way_in_and_out_is_not_multiplied():
    # 1.0 wall s of which the server's clock saw 0.99: 10 ms of HTTP outside it; the first token at 50 ms
    r = _streamed(0.05, 1.0, 0.99)
    assert r.model_ttft_s(SCALE) == pytest.approx(0.04 * SCALE + 0.01)  # 1.61, not 2.0
    # the whole latency keeps the same account, so TTFT stays inside it
    assert r.model_latency_s(SCALE) == pytest.approx(0.99 * SCALE + 0.01)
    assert r.model_ttft_s(SCALE) < r.model_latency_s(SCALE)


def test_without_the_servers_latency_or_on_sglang_the_ttft_is_as_before():
    assert _streamed(0.05, 1.0, None).model_ttft_s(SCALE) == pytest.approx(0.05 * SCALE)
    assert _streamed(0.05, 1.0, 0.99).model_ttft_s(1.0) == pytest.approx(0.05)
    # a first token sooner than the way in and out took: nothing of it is the server's
    assert _streamed(0.005, 1.0, 0.99).model_ttft_s(SCALE) == pytest.approx(0.005)
    assert RequestRecord("sweep", "p", 8, ok=True, end_s=1.0).model_ttft_s(SCALE) is None


def test_the_percentiles_rows_and_slo_read_the_same_figure():
    recs = [_streamed(0.05, 1.0, 0.99, 0), _streamed(0.05, 1.0, 0.99, 1)]
    res = SuiteResult(suite={"name": "t"}, records=recs, time_scale=SCALE, complete=True)
    want_ms = (0.04 * SCALE + 0.01) * 1000.0
    assert res.latency_percentile_ms("ttft", 99, 2) == pytest.approx(want_ms)
    assert res.sweep_row(2).ttft_p50_ms == pytest.approx(want_ms)
    # a limit between the corrected figure (1610 ms) and the multiplied one (2000 ms) is met
    assert res.goodput(2, {"ttft": 1800.0})["good"] == 2
    assert res.summary()["latency_ms@2"]["ttft_p99"] == pytest.approx(want_ms)
