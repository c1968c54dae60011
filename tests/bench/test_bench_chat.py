"""``api: chat``: the request SGLang's ``ChatCompletionRequest`` reads, and its answers parsed as
SGLang 0.5.23 shapes them (tests/support/chat_server.py), complete and streamed; then the same
suite through the simulator as a real process. Also the per-prompt lengths of a dataset suite."""

from __future__ import annotations

import pytest
import requests
from support.chat_server import FakeChatSGLang
from support.simproc import running_sim

from tuner.bench import run_suite
from tuner.bench.sglext import spec_details
from tuner.config.suite import load_suite

SUITE = {
    "name": "chatty",
    "prompts": [
        {"name": "plain", "text": "Write a haiku about rain.", "max_tokens": 10},
        {"name": "turns", "text": "unused as raw text", "max_tokens": 6,
         "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Name a colour."}]},
    ],
    "single": {"repeats": 1},
    "sweep": {"concurrencies": [2]},
    "warmup": {"requests": 0},
    "timeout_s": 10,
}


@pytest.mark.parametrize("stream", [False, True])
def test_chat_sends_messages_and_reads_accept_length_from_sglext(stream):
    with FakeChatSGLang(verify_every=2) as server:
        result = run_suite(server.url, SUITE, api="chat", stream=stream)
    bodies = server.bodies
    assert all(b["model"] == "fake-chat" and b["return_spec_tokens_details"] is True for b in bodies)
    # SGLang reads max_completion_tokens first (protocol.py: max_completion_tokens or max_tokens).
    assert sorted(b["max_completion_tokens"] for b in bodies) == [6, 6, 10, 10]
    assert all(b["temperature"] == 0.0 and b["ignore_eos"] is True for b in bodies)
    turns = [b for b in bodies if b["messages"][0]["role"] == "system"]
    assert turns and turns[0]["messages"][1] == {"role": "user", "content": "Name a colour."}
    plain = [b for b in bodies if b["messages"] == [{"role": "user", "content": "Write a haiku about rain."}]]
    assert len(plain) == 2
    if stream:
        assert bodies[0]["stream"] is True
        assert bodies[0]["stream_options"] == {"include_usage": True, "continuous_usage_stats": True}
    single = [r for r in result.records if r.phase == "single"]
    assert [(r.prompt, r.max_tokens) for r in single] == [("plain", 10), ("turns", 6)]
    for r in result.records:
        assert r.ok and r.completion_tokens == r.max_tokens
        assert r.spec_verify_ct == -(-r.max_tokens // 2)  # from sglext, not from the text
    assert result.accept_length == pytest.approx((10 / 5 + 6 / 3) / 2)
    assert single[0].output_text.startswith("echo Write a haiku")
    if stream:
        assert all(r.ttft_s is not None for r in single) and any(r.itl_s for r in single)


def test_no_sglext_means_no_accept_length():
    with FakeChatSGLang(verify_every=0) as server:
        result = run_suite(server.url, SUITE, api="chat", stream=True)
    assert result.accept_length is None and all(r.ok for r in result.records)


def test_sglext_parser_takes_the_first_of_several_choices_and_ignores_others():
    one = {"spec_verify_ct": 3, "spec_accept_length": 2.0}
    assert spec_details({"sglext": {"spec_tokens_details": one}}) == one
    assert spec_details({"sglext": {"spec_tokens_details": [one, {"spec_verify_ct": 9}]}}) == one
    assert spec_details({"sglext": {"cached_tokens_details": {}}}) is None
    assert spec_details({"choices": []}) is None


@pytest.mark.parametrize("details", [{"spec_accept_length": "2.5"}, {"spec_accept_length": float("nan")},
                                     {"spec_accept_length": -2.0}, {"spec_accept_length": True},
                                     {"spec_verify_ct": "6"}, {"spec_verify_ct": 2.5}, {"spec_verify_ct": -1}])
def test_sglext_figures_that_are_no_number_are_refused_not_dropped(details):
    # QA: these were dropped silently, the trial then read as one whose server says no accept length
    from tuner.bench import RequestRecord
    from tuner.bench.sglext import read_spec_details

    record = RequestRecord("single", "fib", 8)
    with pytest.raises(ValueError, match="is not"):
        read_spec_details({"sglext": {"spec_tokens_details": {"spec_verify_ct": 4, "spec_accept_length": 2.0,
                                                              **details}}}, record)
    # SGLang's 0 for a figure it did not have (utils.py spec_tokens_details_from_meta_info: "or 0")
    record = RequestRecord("single", "fib", 8)
    assert read_spec_details({"sglext": {"spec_tokens_details": {"spec_verify_ct": 0, "spec_accept_length": 0.0}}},
                             record) and record.spec_verify_ct is None and record.spec_accept_length is None


def test_chat_through_the_simulator_uses_sglext_and_drafts_like_generate():
    suite = load_suite("sharegpt-mini").model_copy(update={"sweep": load_suite("quick").sweep.model_copy(
        update={"concurrencies": [4], "max_tokens": None})})
    with running_sim("--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3",
                     "--speculative-eagle-topk", "1", "--speculative-num-draft-tokens", "4",
                     speedup=100) as sim:
        body = {"model": "x", "messages": [{"role": "user", "content": "Return the numbers 1 to 10 as JSON."}],
                "max_completion_tokens": 64, "temperature": 0, "ignore_eos": True,
                "return_spec_tokens_details": True}
        plain = requests.post(sim.url + "/v1/chat/completions", json=body, timeout=30).json()
        assert spec_details(plain)["spec_verify_ct"] > 0
        without = requests.post(sim.url + "/v1/chat/completions",
                                json={**body, "return_spec_tokens_details": False}, timeout=30).json()
        assert "sglext" not in without
        chat = run_suite(sim.url, suite, api="chat", stream=True)
        raw = run_suite(sim.url, suite, api="generate", stream=False)
    assert chat.accept_length and raw.accept_length
    # the same content, judged on the messages and not the template: within sampling noise
    assert chat.accept_length == pytest.approx(raw.accept_length, rel=0.15)
    assert all(r.ok for r in chat.records + raw.records)
    lengths = {r.prompt: r.max_tokens for r in chat.records if r.phase == "sweep"}
    assert lengths == {p.name: p.max_tokens for p in suite.prompts[:4]}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("think_tokens", [3, 99])
def test_a_reasoning_parsers_answer_is_kept_whole(stream, think_tokens):
    """A server launched with --reasoning-parser (SGLang 0.5.23 serving_chat.py: separate_reasoning
    is the request's default) answers the reasoning in reasoning_content and the rest in content,
    "" when the reasoning fills max_tokens: the output kept for the lossless check was content alone,
    so every setting's outputs of a thinking model matched the baseline's ("" == "")."""
    with FakeChatSGLang(think_tokens=think_tokens) as server:
        result = run_suite(server.url, SUITE, api="chat", stream=stream)
    single = {r.prompt: r for r in result.records if r.phase == "single"}
    assert all(r.ok and r.completion_tokens == r.max_tokens for r in single.values())
    assert single["plain"].output_text == "echo Write a haiku about rain."[:40].ljust(40, ".")
    assert single["turns"].output_text == "echo Name a colour.".ljust(24, ".")


def test_a_turns_name_is_sent_as_sglangs_reader_sends_it():
    # SGLang 0.5.23's ChatCompletionMessageGenericParam takes "name" (protocol.py), and its
    # bench_serving sends a dataset row's turns as they are (datasets/openai_dataset.py)
    turns = [{"role": "system", "content": "Be brief."}, {"role": "user", "name": "alice", "content": "Name a colour."}]
    suite = {**SUITE, "prompts": [{"name": "named", "text": "unused", "max_tokens": 4, "messages": turns}],
             "sweep": {"concurrencies": []}}
    with FakeChatSGLang(verify_every=2) as server:
        result = run_suite(server.url, suite, api="chat")
    assert result.records and all(r.ok for r in result.records)
    assert [b["messages"] for b in server.bodies] == [turns]
