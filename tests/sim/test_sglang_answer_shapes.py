"""The simulator's answers, key by key, as SGLang 0.5.23 serializes them (a differential check).

Each assertion names the SGLang source that decides it (paths under ``python/sglang/srt/`` of the
0.5.23 wheel). The tuner's client (``tuner/bench/client.py``, ``sglext.py``) reads only some of these
keys; the rest are pinned so that a client written against the simulator runs against SGLang too.
"""

from __future__ import annotations

import json
import re

import pytest
import requests
from support.simproc import running_sim

SPEC = ("--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3", "--speculative-eagle-topk", "1",
        "--speculative-num-draft-tokens", "4")
JSON = {"Content-Type": "application/json"}
RID = re.compile(r"[0-9a-f]{32}")  # io_struct.py line 564: rid = uuid.uuid4().hex, no prefix
#: protocol.py UsageInfo (lines 221-229), as usage_processor.py calculate_token_usage fills it
USAGE_KEYS = {"prompt_tokens", "total_tokens", "completion_tokens", "prompt_tokens_details",
              "reasoning_tokens", "completion_tokens_details"}


@pytest.fixture(scope="module")
def sim():
    with running_sim(*SPEC, speedup=200.0) as s:
        yield s


def _post(sim, route: str, body: dict) -> requests.Response:
    return requests.post(sim.url + route, data=json.dumps(body).encode(), headers=JSON, timeout=30)


def _events(r: requests.Response) -> list:
    """The SSE ``data:`` payloads of a stream, ``[DONE]`` included as the string."""
    out = []
    for line in r.text.split("\n"):
        if line.startswith("data: "):
            payload = line[len("data: "):]
            out.append(payload if payload == "[DONE]" else json.loads(payload))
    return out


def test_chat_answer_has_sglangs_keys(sim):
    r = _post(sim, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3,
                                            "temperature": 0})
    assert r.status_code == 200, r.text
    body = r.json()
    # protocol.py ChatCompletionResponse (lines 1336-1351): sglext dropped when None
    assert set(body) == {"id", "object", "created", "model", "choices", "usage", "metadata"}
    # serving_chat.py line 3044: id=ret[0]["meta_info"]["id"], the rid itself
    assert RID.fullmatch(body["id"]), body["id"]
    # serving_chat.py line 3049; weight_versions.py build_endpoint_weight_version_metadata
    assert body["metadata"] == {"weight_version": "default"}
    choice = body["choices"][0]
    # protocol.py ChatCompletionResponseChoice._serialize (lines 1321-1333) drops the None extras
    assert set(choice) == {"index", "message", "logprobs", "finish_reason", "matched_stop"}
    # protocol.py ChatMessage._serialize (lines 1299-1304): no tool_calls key without tool calls
    assert set(choice["message"]) == {"role", "content", "reasoning_content"}
    assert set(body["usage"]) == USAGE_KEYS
    assert (body["usage"]["reasoning_tokens"], body["usage"]["completion_tokens_details"]) == (0, None)


def test_completion_answer_has_sglangs_keys(sim):
    r = _post(sim, "/v1/completions", {"prompt": "hi", "max_tokens": 3, "temperature": 0})
    assert r.status_code == 200, r.text
    body = r.json()
    # protocol.py CompletionResponse (lines 528-543); serving_completions.py lines 639-646
    assert set(body) == {"id", "object", "created", "model", "choices", "usage", "metadata"}
    assert RID.fullmatch(body["id"]), body["id"]
    assert body["metadata"] == {"weight_version": "default"}
    assert set(body["choices"][0]) == {"index", "text", "logprobs", "finish_reason", "matched_stop"}
    assert set(body["usage"]) == USAGE_KEYS


def test_chat_stream_chunks_carry_the_rid_and_whole_usage(sim):
    r = _post(sim, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3,
                                            "temperature": 0, "stream": True,
                                            "stream_options": {"include_usage": True,
                                                               "continuous_usage_stats": True}})
    events = _events(r)
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    # serving_chat.py lines 2587, 2656, 2791: every chunk's id is content["meta_info"]["id"]
    assert len({c["id"] for c in chunks}) == 1 and RID.fullmatch(chunks[0]["id"])
    # a text chunk's continuous usage is UsageInfo.model_dump() (serving_chat.py lines 1035-1041)
    texts = [c for c in chunks if c["choices"] and c["choices"][0]["delta"].get("content")]
    assert texts and all(set(c["usage"]) == USAGE_KEYS for c in texts)
    # the last chunk is dumped whole (serving_chat.py line 2797: model_dump_json(), no exclude_none)
    assert chunks[-1]["choices"] == [] and set(chunks[-1]["usage"]) == USAGE_KEYS


def test_completion_stream_usage_chunk_drops_nulls(sim):
    r = _post(sim, "/v1/completions", {"prompt": "hi", "max_tokens": 3, "temperature": 0, "stream": True,
                                       "stream_options": {"include_usage": True}})
    events = _events(r)
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert len({c["id"] for c in chunks}) == 1 and RID.fullmatch(chunks[0]["id"])
    # a text chunk without continuous usage: model_dump_json() keeps "usage": null (line 403)
    assert all("usage" in c and c["usage"] is None for c in chunks[:-1])
    # serving_completions.py line 495: the usage chunk is dumped with exclude_none=True
    assert chunks[-1]["choices"] == []
    assert set(chunks[-1]["usage"]) == {"prompt_tokens", "total_tokens", "completion_tokens", "reasoning_tokens"}


def test_models_list_and_card_are_sglangs(sim):
    """http_server.py available_models (lines 1993-2022) and retrieve_model (lines 2025-2047): a
    ModelCard (protocol.py lines 87-96) whose root is the served name; the simulator reported the
    model path as root, had no parent key, and no /v1/models/{model} route at all (404 text)."""
    listed = requests.get(sim.url + "/v1/models", timeout=10).json()
    assert listed["object"] == "list" and len(listed["data"]) == 1
    card = listed["data"][0]
    assert set(card) == {"id", "object", "created", "owned_by", "root", "parent", "max_model_len"}
    assert (card["root"], card["parent"], card["object"], card["owned_by"]) == (card["id"], None, "model", "sglang")
    one = requests.get(sim.url + "/v1/models/" + card["id"], timeout=10)  # the name has a slash: a path
    assert one.status_code == 200 and {k: v for k, v in one.json().items() if k != "created"} == {
        k: v for k, v in card.items() if k != "created"}
    missing = requests.get(sim.url + "/v1/models/no-such-model", timeout=10)
    assert missing.status_code == 404
    assert missing.json() == {"error": {"message": "The model 'no-such-model' does not exist",
                                        "type": "invalid_request_error", "param": "model",
                                        "code": "model_not_found"}}


def test_generate_answers_have_sglangs_keys(sim):
    """tokenizer_manager.py _handle_batch_output (lines 2665-2670): an answer is {text, output_ids,
    meta_info}; a batch (a list of prompts, or n > 1) is the list of them in prompt-major order
    (_collect_batch_responses), with no "index" key (the simulator added one; only a streamed batch's
    chunks have it, _stream_batch_responses line 2224)."""
    one = _post(sim, "/generate", {"text": "hi", "sampling_params": {"max_new_tokens": 3, "temperature": 0}})
    assert set(one.json()) == {"text", "output_ids", "meta_info"}
    batch = _post(sim, "/generate", {"text": ["hi", "there"], "sampling_params": {"max_new_tokens": 3, "n": 2}})
    assert batch.status_code == 200, batch.text
    assert [set(o) for o in batch.json()] == [{"text", "output_ids", "meta_info"}] * 4


def test_chat_stream_of_two_choices_is_sglangs(sim):
    """serving_chat.py _generate_chat_stream with n=2 (tokenizer_manager.py _stream_batch_responses
    yields both outputs as they come, each with its index): per choice a role chunk then its text,
    each chunk with its own output's rid; the finish reasons only after both ended (lines 2641-2662),
    then sglext with a list of details (line 2728: a list when n > 1), then usage counting the
    prompt once (usage_processor.py calculate_streaming_usage). The simulator refused the request."""
    r = _post(sim, "/v1/chat/completions", {
        "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "temperature": 0.7, "n": 2,
        "stream": True, "return_spec_tokens_details": True,
        "stream_options": {"include_usage": True, "continuous_usage_stats": True}})
    assert r.status_code == 200, r.text
    events = _events(r)
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    usage_chunk, sglext_chunk = chunks[-1], chunks[-2]
    finishes = [c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"]]
    body = [c for c in chunks if c["choices"] and not c["choices"][0]["finish_reason"]]
    assert chunks[-4:-2] == finishes and sorted(c["choices"][0]["index"] for c in finishes) == [0, 1]
    assert all(c["choices"][0]["delta"] == {"reasoning_content": None} for c in finishes)
    for index in (0, 1):
        mine = [c for c in body if c["choices"][0]["index"] == index]
        assert mine[0]["choices"][0]["delta"] == {"reasoning_content": None, "role": "assistant", "content": ""}
        assert len({c["id"] for c in mine}) == 1 and RID.fullmatch(mine[0]["id"])
        assert mine[-1]["usage"]["completion_tokens"] == 5  # each choice's own count
    assert body[0]["id"] != [c for c in body if c["choices"][0]["index"] != body[0]["choices"][0]["index"]][0]["id"]
    details = sglext_chunk["sglext"]["spec_tokens_details"]
    assert sglext_chunk["choices"] == [] and isinstance(details, list) and len(details) == 2
    single = _post(sim, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5})
    assert usage_chunk["usage"]["prompt_tokens"] == single.json()["usage"]["prompt_tokens"]
    assert usage_chunk["usage"]["completion_tokens"] == 10


def test_completions_stream_of_two_prompts_is_sglangs(sim):
    """serving_completions.py _generate_completion_stream: each output's chunks carry its index and
    rid, the finish reason on its own last chunk (lines 345-403); usage sums both prompts."""
    r = _post(sim, "/v1/completions", {"prompt": ["hi", "Write a haiku about the sea."], "max_tokens": 4,
                                       "temperature": 0, "stream": True, "stream_options": {"include_usage": True}})
    assert r.status_code == 200, r.text
    chunks = _events(r)[:-1]
    texts = {0: "", 1: ""}
    for c in chunks[:-1]:
        texts[c["choices"][0]["index"]] += c["choices"][0]["text"]
    for index in (0, 1):
        mine = [c for c in chunks[:-1] if c["choices"][0]["index"] == index]
        assert [c["choices"][0]["finish_reason"] for c in mine][-1] == "length"
        assert all(c["choices"][0]["finish_reason"] is None for c in mine[:-1])
    whole = _post(sim, "/v1/completions", {"prompt": ["hi", "Write a haiku about the sea."], "max_tokens": 4,
                                           "temperature": 0}).json()
    assert [texts[0], texts[1]] == [c["text"] for c in whole["choices"]]  # greedy: the same text
    assert chunks[-1]["usage"]["prompt_tokens"] == whole["usage"]["prompt_tokens"]
    assert chunks[-1]["usage"]["completion_tokens"] == 8


def test_generate_batch_stream_is_sglangs(sim):
    """http_server.py stream_results over tokenizer_manager.py _stream_batch_responses: each chunk is
    one output's {text, output_ids, meta_info} plus its "index" (line 2224), then [DONE]."""
    r = _post(sim, "/generate", {"text": ["hi", "there"], "stream": True,
                                 "sampling_params": {"max_new_tokens": 4, "temperature": 0}})
    assert r.status_code == 200, r.text
    events = _events(r)
    assert events[-1] == "[DONE]"
    chunks = events[:-1]
    assert all(set(c) == {"text", "output_ids", "meta_info", "index"} for c in chunks)
    last = {c["index"]: c for c in chunks}
    assert sorted(last) == [0, 1]
    whole = _post(sim, "/generate", {"text": ["hi", "there"], "sampling_params": {"max_new_tokens": 4,
                                                                                  "temperature": 0}}).json()
    for index in (0, 1):
        assert last[index]["meta_info"]["finish_reason"] == {"type": "length", "length": 4}
        assert last[index]["text"] == whole[index]["text"]  # cumulative: the whole text at the end


def test_leaving_a_stream_of_two_choices_aborts_both():
    """tokenizer_manager.py: a disconnected client's requests are aborted; with several choices in one
    stream, every one of them (else /flush_cache would stay 400 for the abandoned choice's ~300
    model s)."""
    from support.lifecycle import flush_ok_within

    with running_sim(speedup=5.0) as slow:  # each choice: ~60 s of wall time
        r = requests.post(slow.url + "/v1/completions", stream=True, timeout=30, headers=JSON, data=json.dumps({
            "prompt": "hi", "max_tokens": 8000, "ignore_eos": True, "n": 2, "stream": True}).encode())
        lines = r.iter_lines()  # held: a dropped iterator closes the connection
        assert next(lines).startswith(b"data: ")  # the stream is running
        assert requests.post(slow.url + "/flush_cache", timeout=10).status_code == 400
        r.close()
        assert flush_ok_within(slow.url, 20.0) is not None  # both aborted, not run to their end


@pytest.mark.parametrize("sampling, message", [
    ({"max_new_tokens": 100_000}, "Requested token count exceeds the model's maximum context length"),
    ({"max_new_tokens": 4, "top_p": 0}, "top_p must be in (0, 1], got 0."),
    ({"max_new_tokens": 4, "stop": ["\n"]}, "The simulated SGLang server does not implement stop strings"),
])
def test_streamed_generate_refused_by_the_tokenizer_manager_is_an_event(sim, sampling, message):
    """http_server.py serve_generate_request (lines 951-975): a streamed /generate is a
    StreamingResponse whose generator runs the tokenizer manager's checks, so its status (200) is
    sent before a ValueError, which comes as an error event, then [DONE]. The simulator answered
    HTTP 400 with the JSON body of a plain request (a client's failure kind differed: an HTTP error
    on the simulator, an error event on SGLang). FastAPI's and the contract's checks come before the
    stream and stay 400 (test_sim_requests.py)."""
    r = _post(sim, "/generate", {"text": "hi", "stream": True, "sampling_params": sampling})
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/event-stream")
    events = _events(r)
    assert events[-1] == "[DONE]" and len(events) == 2
    error = events[0]["error"]
    assert (set(error), error["type"], error["code"], error["retryable"]) == (
        {"message", "type", "code", "retryable"}, "invalid_request_error", 400, False)
    assert error["message"].startswith(message)
    plain = _post(sim, "/generate", {"text": "hi", "sampling_params": sampling})
    assert plain.status_code == 400 and plain.json()["error"]["message"] == error["message"]


def test_default_include_usage_flag_adds_the_usage_chunk():
    """utils.py should_include_usage (lines 250-264): with --stream-response-default-include-usage a
    stream ends with the usage chunk whether or not the request sets stream_options; the simulator
    parsed the flag and ignored it."""
    with running_sim("--stream-response-default-include-usage", speedup=200.0) as s:
        for route, body in (("/v1/completions", {"prompt": "hi"}),
                            ("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}]})):
            for options in ({}, {"stream_options": {"continuous_usage_stats": True}}):
                r = _post(s, route, {**body, "max_tokens": 3, "stream": True, **options})
                last = _events(r)[-2]
                assert last["choices"] == [] and last["usage"]["completion_tokens"] == 3, (route, options, last)


def test_cache_report_flag_fills_prompt_tokens_details():
    """--enable-cache-report: usage.prompt_tokens_details is {"cached_tokens": N}
    (usage_processor.py calculate_response_usage / calculate_streaming_usage; chat's continuous usage
    too, serving_chat.py _continuous_usage_cached_details; completions' continuous usage never,
    serving_completions.py lines 396-401). The simulator caches nothing (meta_info.cached_tokens 0)
    and left the details null."""
    with running_sim("--enable-cache-report", speedup=200.0) as s:
        chat = {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 3}
        assert _post(s, "/v1/chat/completions", chat).json()["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}
        assert _post(s, "/v1/completions", {"prompt": "hi", "max_tokens": 3}).json()["usage"][
            "prompt_tokens_details"] == {"cached_tokens": 0}
        options = {"stream": True, "stream_options": {"include_usage": True, "continuous_usage_stats": True}}
        chunks = _events(_post(s, "/v1/chat/completions", {**chat, **options}))[:-1]
        assert all(c["usage"]["prompt_tokens_details"] == {"cached_tokens": 0} for c in chunks if "usage" in c)
        chunks = _events(_post(s, "/v1/completions", {"prompt": "hi", "max_tokens": 3, **options}))[:-1]
        assert all(c["usage"]["prompt_tokens_details"] is None for c in chunks[:-1])
        assert chunks[-1]["usage"]["prompt_tokens_details"] == {"cached_tokens": 0}


def test_request_ids_are_the_clients_as_sglang_names_them(sim):
    """io_struct.py _normalize_rid (lines 759-774) and _validate_rid_uniqueness (lines 390-397): one
    output keeps the client's rid; a batch's are rid_0, rid_1 ... for a string, the list's own for a
    list of one per prompt; with n > 1 fresh ones (regenerate_rid). The OpenAI routes pass their rid
    on (serving_completions.py line 134), and the answer's id is the first output's. The simulator
    ignored the client's rid (ids were drawn at random)."""
    gen = {"text": "hi", "sampling_params": {"max_new_tokens": 2}}
    assert _post(sim, "/generate", {**gen, "rid": "abc"}).json()["meta_info"]["id"] == "abc"
    two = {**gen, "text": ["hi", "there"]}
    assert [o["meta_info"]["id"] for o in _post(sim, "/generate", {**two, "rid": "abc"}).json()] == ["abc_0", "abc_1"]
    assert [o["meta_info"]["id"] for o in _post(sim, "/generate", {**two, "rid": ["x", "y"]}).json()] == ["x", "y"]
    sampled = _post(sim, "/generate", {**gen, "rid": "s", "sampling_params": {"max_new_tokens": 2, "n": 2}}).json()
    assert all(RID.fullmatch(o["meta_info"]["id"]) for o in sampled)
    for rid, message in ((["x"], "The specified rids length mismatch with the batch_size for batch processing."),
                         (["x", "x"], "Duplicate request IDs detected within the request: ['x']")):
        r = _post(sim, "/generate", {**two, "rid": rid})
        assert (r.status_code, r.json()) == (400, {"error": {"message": message}})
    assert _post(sim, "/v1/completions", {"prompt": "hi", "max_tokens": 2, "rid": "r1"}).json()["id"] == "r1"


def test_a_request_id_in_flight_is_refused():
    """tokenizer_manager.py _init_req_state (lines 3834-3837): "Duplicate request ID detected" while a
    request of that id is in flight; free again once it has ended."""
    with running_sim(speedup=20.0) as slow:
        r = requests.post(slow.url + "/generate", stream=True, timeout=30, headers=JSON, data=json.dumps({
            "text": "hi", "rid": "busy", "stream": True,
            "sampling_params": {"max_new_tokens": 8000, "ignore_eos": True}}).encode())
        lines = r.iter_lines()  # held: a dropped iterator closes the connection
        assert next(lines).startswith(b"data: ")
        again = _post(slow, "/generate", {"text": "hi", "rid": "busy", "sampling_params": {"max_new_tokens": 2}})
        assert (again.status_code, again.json()) == (400, {"error": {"message": "Duplicate request ID detected: busy"}})
        chat = _post(slow, "/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "rid": "busy"})
        assert (chat.status_code, chat.json()["message"]) == (400, "Duplicate request ID detected: busy")
        r.close()
        from support.lifecycle import flush_ok_within

        assert flush_ok_within(slow.url, 20.0) is not None  # the first is gone
        ok = _post(slow, "/generate", {"text": "hi", "rid": "busy", "sampling_params": {"max_new_tokens": 2}})
        assert ok.status_code == 200 and ok.json()["meta_info"]["id"] == "busy"
