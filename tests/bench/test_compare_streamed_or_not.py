"""`tuner bench --compare` refuses a baseline streamed where this run is not, or the other way (QA: a
baseline saved without --stream was taken by `--stream --compare`, and every speedup compared a
streamed answer, a chunk per step, with a whole one; a study never does: its baseline and trials share
bench.stream). Refused before any request, exit 2, nothing written."""

import pytest

from support.cli_in_process import tuner_here
from tuner.bench import SuiteResult
from tuner.config.suite import load_suite


@pytest.mark.parametrize("base_streamed, flags, said, fix", [
    (False, ["--stream"], "without --stream, this run with it", "with --stream"),
    (True, [], "with --stream, this run without it", "without --stream"),
])
def test_a_baseline_streamed_otherwise_is_refused(tmp_path, base_streamed, flags, said, fix):
    SuiteResult(suite=load_suite("quick").to_dict(), base_url="http://127.0.0.1:9", api="generate",
                stream=base_streamed, complete=True).save(tmp_path / "base.json")
    res = tuner_here("bench", "--url", "http://127.0.0.1:9", "--suite", "quick", *flags, "--compare", "base.json",
                     "--json", "out.json", cwd=tmp_path)
    assert res.exit_code == 2, res.output
    assert res.stderr.strip().splitlines() == [
        f"error: --compare: base.json was measured {said}: the requests differ (a streamed answer comes a chunk "
        f"per step); measure the baseline {fix}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["base.json"]


def test_a_baseline_streamed_alike_goes_on_to_the_server(tmp_path):
    SuiteResult(suite=load_suite("quick").to_dict(), base_url="http://127.0.0.1:9", api="generate",
                stream=True, complete=True).save(tmp_path / "base.json")
    res = tuner_here("bench", "--url", "http://127.0.0.1:9", "--suite", "quick", "--stream", "--compare",
                     "base.json", cwd=tmp_path)
    # nothing answers on port 9 (discard): the run got past the baseline's checks to the server
    assert res.exit_code == 1 and res.stderr.startswith("error: no server answering at http://127.0.0.1:9"), \
        res.output
