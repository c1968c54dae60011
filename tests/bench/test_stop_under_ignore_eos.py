"""`tuner bench` against a /generate that answers finish reason ``stop`` to a request sent with
``ignore_eos`` (the suites' default), with the count asked (a real aiohttp server on 127.0.0.1). SGLang
0.5.23 skips EOS and stop tokens under ignore_eos and the tuner sends no stop strings, so such an answer
finishes ``length``; ``stop`` is no answer to the request asked (or SGLang's "NaN happened"), and fails
the run with one line, exit 1. Before, it was measured, exit 0 (QA)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from test_bench_client import FakeSGLang
from test_lying_server import ONE, _bench

from tuner.cli import cli


class StopServer(FakeSGLang):
    """FakeSGLang whose finished answers say ``{"type": "stop", "matched": 2}`` (an EOS token matched)."""

    def _meta(self, tokens, rid):
        meta = super()._meta(tokens, rid)
        if meta["finish_reason"] is not None:
            meta["finish_reason"] = {"type": "stop", "matched": 2}
        return meta


@pytest.mark.parametrize("args", [(), ("--stream",)])
def test_stop_under_ignore_eos_is_no_answer_to_the_request_asked(tmp_path, args):
    with StopServer() as srv:
        error, saved = _bench(tmp_path, srv.url, *args)
    assert "1 of 1 answer cannot be true" in error, error
    assert "finish_reason stop with ignore_eos, where the 8 tokens asked finish length" in error, error
    assert saved["complete"] is False
    assert all(body["sampling_params"]["ignore_eos"] is True for _, body in srv.bodies)


def test_stop_without_ignore_eos_is_measured(tmp_path):
    # ignore_eos false: the model may stop at its EOS, and the answer is the request asked
    suite_file, out = tmp_path / "one.yaml", tmp_path / "out.json"
    suite_file.write_text(json.dumps({**ONE, "ignore_eos": False}))
    with StopServer() as srv:
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file),
                                     "--json", str(out)])
    assert r.exit_code == 0, r.output
    (record,) = json.loads(out.read_text())["records"]
    assert record["ok"] and record["finish_reason"] == "stop" and record["completion_tokens"] == 8
