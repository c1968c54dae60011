"""Verify steps and accept lengths no speculative setting can give fail the request, whatever the
server says it runs: a verify step commits at least one token, so ``spec_verify_ct`` is at most the
answer's tokens and SGLang's accept length (``completion_tokens / spec_verify_ct``) lies in 1 to them.
A study bounds them tighter by its setting (:mod:`tuner.engine.verify`); ``tuner bench`` against a
server whose ``/server_info`` says nothing of speculation bounded nothing (QA: accept 0.10, 0.00 and
50.00 in its table for 8 tokens, exit 0). Real HTTP on 127.0.0.1 (the raw server of
``test_unforeseen_lies``)."""

from __future__ import annotations

import json

import pytest
from test_unforeseen_lies import LyingServer, ask, json_answer


def generate_answer(n: int, **spec) -> bytes:
    meta = {"prompt_tokens": 5, "completion_tokens": n, "finish_reason": {"type": "length"}, **spec}
    return json_answer(json.dumps({"text": "x" * n, "meta_info": meta}).encode())


def completions_answer(n: int, **spec) -> bytes:
    return json_answer(json.dumps({
        "choices": [{"index": 0, "text": "x" * n, "finish_reason": "length"}],
        "usage": {"prompt_tokens": 5, "completion_tokens": n, "total_tokens": 5 + n},
        "sglext": {"spec_tokens_details": spec}}).encode())


@pytest.mark.parametrize("api, spec, said", [
    ("generate", {"spec_verify_ct": 80, "spec_accept_length": 0.1},
     "spec_verify_ct 80 is more than the 8 tokens"),
    ("generate", {"spec_verify_ct": 9}, "spec_verify_ct 9 is more than the 8 tokens"),
    ("generate", {"spec_accept_length": 0.5}, "spec_accept_length 0.5 is outside 1 to the 8 tokens"),
    ("generate", {"spec_accept_length": 0.0}, "spec_accept_length 0 is outside 1 to the 8 tokens"),
    ("generate", {"spec_accept_length": 50.0}, "spec_accept_length 50 is outside 1 to the 8 tokens"),
    ("openai", {"spec_verify_ct": 80, "spec_accept_length": 0.1},
     "spec_verify_ct 80 is more than the 8 tokens"),
    ("openai", {"spec_accept_length": 8.5}, "spec_accept_length 8.5 is outside 1 to the 8 tokens"),
])
def test_figures_no_setting_can_give_fail_the_request(api, spec, said):
    answer = (generate_answer if api == "generate" else completions_answer)(8, **spec)
    with LyingServer(lambda path: answer) as srv:
        record = ask(srv.url, api, False, max_tokens=8)
    assert not record.ok and record.error_kind == "protocol", record
    assert said in record.error and "a verify step commits at least one" in record.error, record.error


@pytest.mark.parametrize("api, spec", [
    ("generate", {"spec_verify_ct": 8, "spec_accept_length": 1.0}),   # one token per step: the least
    ("generate", {"spec_verify_ct": 1, "spec_accept_length": 8.0}),   # all in one step: the most (a study's
    ("openai", {"spec_verify_ct": 3, "spec_accept_length": 8 / 3}),   # setting bounds it tighter)
    ("generate", {}),                                                 # no speculation said at all
])
def test_figures_within_what_some_setting_gives_are_measured(api, spec):
    answer = (generate_answer if api == "generate" else completions_answer)(8, **spec)
    with LyingServer(lambda path: answer) as srv:
        record = ask(srv.url, api, False, max_tokens=8)
    assert record.ok, record.error
    assert record.spec_verify_ct == spec.get("spec_verify_ct")


def info_answer(**said) -> bytes:
    return json_answer(json.dumps({"version": "0.5.23", "model_path": "m", **said}).encode())


@pytest.mark.parametrize("said, judged", [
    ({}, False),                                                      # nothing of speculation: the client
    ({"speculative_algorithm": "EAGLE3", "speculative_num_steps": 3,  # its flags: the study's verify rules
      "speculative_eagle_topk": 1, "speculative_num_draft_tokens": 4}, True),
    ({"speculative_algorithm": None}, True),                          # none: any verify step is judged
])
def test_a_server_that_says_its_setting_is_judged_by_it_not_by_the_client(said, judged):
    # a study fails a trial whose figures its setting cannot give as bad_response (args_mismatch for a
    # baseline), which needs them as answers: failed here, the trial read as request_errors
    from tuner.bench.runner import run_suite

    answers = {"/server_info": info_answer(**said),
               "/generate": generate_answer(8, spec_verify_ct=80, spec_accept_length=0.1)}
    suite = {"name": "s", "prompts": [{"name": "p", "text": "hello"}],
             "single": {"lengths": [8], "repeats": 1}, "warmup": {"requests": 0}, "flush_cache": False}
    with LyingServer(lambda path: answers.get(path, json_answer(b"{}"))) as srv:
        result = run_suite(srv.url, suite)
    [record] = result.records
    if judged:
        assert record.ok and record.spec_verify_ct == 80, record.error
    else:
        assert not record.ok and "spec_verify_ct 80 is more than the 8 tokens" in record.error, record
