"""`tuner bench` against a server that lies in ways SGLang 0.5.23 never answers (the shared fake,
test_bench_client.FakeSGLang, on a real socket): each lie fails its request, or the run's answers, with
one line naming it, and the run exits 1. Before, each was measured and printed, exit 0 (QA)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from test_bench_client import FakeSGLang

from tuner.cli import cli

#: one request in all: one prompt, one length, once, no warm-up, no sweep
ONE = {"name": "one", "prompts": [{"name": "fib", "text": "def fib(n):"}],
       "single": {"lengths": [8], "repeats": 1}, "sweep": {"concurrencies": []},
       "warmup": {"requests": 0}, "timeout_s": 500}


def _bench(tmp_path, url: str, *args: str, suite: dict = ONE) -> tuple[str, dict]:
    """``tuner bench`` of ``suite``: it must exit 1 with one error line; that line and the saved JSON."""
    suite_file, out = tmp_path / "one.yaml", tmp_path / "out.json"
    suite_file.write_text(json.dumps(suite))
    r = CliRunner().invoke(cli, ["bench", "--url", url, "--suite", str(suite_file), "--json", str(out), *args])
    assert r.exit_code == 1, r.output
    errors = [line for line in r.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, r.stderr
    return errors[0], json.loads(out.read_text())


@pytest.mark.parametrize("args", [(), ("--api", "openai", "--stream"), ("--stream",)])
def test_finish_reason_length_short_of_max_tokens_is_a_request_the_server_cut(tmp_path, args):
    # ignore_eos false: 5 of 8 tokens is a count a request may have, but not with finish reason length
    # (SGLang's scheduler lowered max_new_tokens: SGLANG_MAX_NEW_TOKENS_LIMIT, the context, the KV budget)
    with FakeSGLang(lie="capped") as srv:
        error, saved = _bench(tmp_path, srv.url, *args, suite={**ONE, "ignore_eos": False})
    assert "1 of 1 answer cannot be true" in error, error
    assert "completion_tokens 5 with finish_reason length, 8 asked: the server lowered max_new_tokens" in error
    assert saved["complete"] is False


@pytest.mark.parametrize("api", ["generate", "openai"])
@pytest.mark.parametrize("lie, said", [
    ("no_done", "the stream of 8 tokens ended without data: [DONE]"),
    ("after_done", "the stream went on after data: [DONE] with '{"),
    ("done_twice", "the stream went on after data: [DONE] with '[DONE]'"),
])
def test_a_stream_ends_with_one_done_and_nothing_after_it(tmp_path, api, lie, said):
    with FakeSGLang(lie=lie) as srv:
        error, saved = _bench(tmp_path, srv.url, "--api", api, "--stream")
    assert said in error, error
    (record,) = saved["records"]
    assert not record["ok"] and record["error_kind"] == "protocol" and said in record["error"]


def test_a_generate_stream_of_new_text_only_unsaid_is_not_taken_for_the_text_so_far(tmp_path):
    # the text kept for the lossless check was the last chunk's alone
    with FakeSGLang(lie="deltas") as srv:
        error, saved = _bench(tmp_path, srv.url, "--stream")
    assert "the stream's text went from 3 characters to 'd4', which does not continue it" in error, error
    assert saved["records"][0]["output_text"] is None


@pytest.mark.parametrize("args", [(), ("--stream",)])
def test_an_accept_length_its_own_counts_contradict_fails_the_request(tmp_path, args):
    with FakeSGLang(lie="accept_off") as srv:
        error, saved = _bench(tmp_path, srv.url, *args)
    assert "spec_accept_length 3 is not completion_tokens / spec_verify_ct = 8 / 4 = 2" in error, error
    assert saved["figures"]["accept_length"] is None


@pytest.mark.parametrize("args", [(), ("--api", "openai")])
def test_a_prompt_token_count_that_is_no_count_fails_the_request(tmp_path, args):
    with FakeSGLang(lie="prompt_text") as srv:
        error, saved = _bench(tmp_path, srv.url, *args)
    assert "prompt_tokens 'lots' is not a count of tokens" in error, error
    assert saved["records"][0]["prompt_tokens"] is None


#: a server that says it speculates not at all: SGLang 0.5.23's /server_info with speculation off
AUTOREGRESSIVE = {"version": "0.5.23-fake", "model_path": "fake/model", "sim_speedup": 100.0,
                  "speculative_algorithm": None, "internal_states": [{"speculative_algorithm": None}]}


def test_verify_steps_from_a_server_that_says_it_does_not_speculate_fail_the_run(tmp_path):
    # QA: its header said "no speculative decoding" while the saved records held verify steps, exit 0
    with FakeSGLang(info=AUTOREGRESSIVE, verify_every=2) as srv:
        error, saved = _bench(tmp_path, srv.url)
    assert "1 of 1 answer cannot be true" in error and "verify steps from an autoregressive server" in error, error
    assert saved["complete"] is False


def test_a_server_that_says_nothing_of_speculation_is_not_bounded_by_it(tmp_path):
    # the same answers from a server whose /server_info does not name the algorithm: nothing to judge by
    suite_file, out = tmp_path / "one.yaml", tmp_path / "out.json"
    suite_file.write_text(json.dumps(ONE))
    info = {k: v for k, v in AUTOREGRESSIVE.items() if k not in ("speculative_algorithm", "internal_states")}
    with FakeSGLang(info=info, verify_every=2) as srv:
        r = CliRunner().invoke(cli, ["bench", "--url", srv.url, "--suite", str(suite_file), "--json", str(out)])
    assert r.exit_code == 0, r.output
    assert json.loads(out.read_text())["complete"] is True
