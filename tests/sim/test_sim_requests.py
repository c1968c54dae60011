"""Request -> status and body, against the simulator as a real process, written from SGLang 0.5.23.

Every row names the SGLang source that decides it (paths under ``python/sglang/``). Three body
shapes, one per layer that refuses (see ``tuner/sim/requests.py``):

* ``fastapi``: FastAPI's RequestValidationError as SGLang renders it, ``{"object": "error",
  "message": "N validation error(s): ...", "type": "Bad Request", "param": null, "code": 400}``
  (srt/entrypoints/http_server.py lines 636-692); the message names pydantic's error type;
* ``contract``: ``{"error": "<serde text>"}`` (http_server.py 937-939, sglang/api/v1/api_types.py);
* ``native``: ``{"error": {"message": ...}}`` (http_server.py ``_create_error_response``, 2246);
* ``openai``: ``{"object": "error", "message": ..., "type": "BadRequestError", "param": null,
  "code": 400}`` (srt/entrypoints/openai/serving_base.py ``create_error_response``).
"""

from __future__ import annotations

import json
import re

import pytest
import requests
from support.simproc import running_sim

PROMPT = "Write a Python function that returns the n-th Fibonacci number."
JSON = {"Content-Type": "application/json"}
SAMPLING_FIELDS = ("`max_new_tokens`, `stop`, `stop_token_ids`, `stop_regex`, `temperature`, `top_p`, "
                   "`top_k`, `min_p`, `frequency_penalty`, `presence_penalty`, `repetition_penalty`, "
                   "`min_new_tokens`, `n`, `json_schema`, `regex`, `ebnf`, `structural_tag`, `ignore_eos`, "
                   "`skip_special_tokens`, `spaces_between_special_tokens`, `no_stop_trim`, "
                   "`stream_interval`, `logit_bias`, `sampling_seed`, `custom_params`, `beam_width`, "
                   "`watermark`, `choice`")
NOT_IMPLEMENTED = "The simulated SGLang server does not implement"


def gen(**sampling):
    return {"text": PROMPT, "sampling_params": {"max_new_tokens": 4, "temperature": 0, **sampling}}


def comp(**fields):
    return {"model": "m", "prompt": PROMPT, "max_tokens": 4, "temperature": 0, **fields}


def chat(**fields):
    return {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4, **fields}


# (id, route, body (dict -> JSON, bytes -> raw), headers, status, shape, text the message holds)
ROWS = [
    # -- /generate, FastAPI layer: GenerateReqInput (srt/managers/io_struct.py line 177)
    ("gen-not-json", "/generate", b"{not json", JSON, 400, "fastapi", "'type': 'json_invalid'"),
    ("gen-form-content-type", "/generate", json.dumps(gen()).encode(),
     {"Content-Type": "application/x-www-form-urlencoded"}, 400, "fastapi", "'type': 'dataclass_type'"),
    ("gen-body-list", "/generate", [1, 2], JSON, 400, "fastapi", "'type': 'dataclass_type'"),
    ("gen-text-int", "/generate", {"text": 5}, JSON, 400, "fastapi", "'type': 'string_type'"),
    ("gen-stream-maybe", "/generate", {**gen(), "stream": "maybe"}, JSON, 400, "fastapi",
     "'type': 'bool_parsing'"),
    ("gen-empty-body", "/generate", b"", JSON, 400, "fastapi", "'type': 'missing'"),
    # -- /generate, the JSON contract (api_types.py decode_GenerateRequest / decode_SamplingParams):
    # pydantic coerces "yes" to True, the contract does not
    ("gen-stream-yes", "/generate", {**gen(), "stream": "yes"}, JSON, 400, "contract",
     'invalid type: string "yes", expected a boolean'),
    ("gen-unknown-sampling-key", "/generate", gen(max_tokens=4), JSON, 400, "contract",
     f"unknown field `max_tokens`, expected one of {SAMPLING_FIELDS}"),
    ("gen-max-new-tokens-float", "/generate", gen(max_new_tokens=4.0), JSON, 400, "contract",
     "invalid type: floating point `4.0`, expected i64"),
    ("gen-max-new-tokens-string", "/generate", gen(max_new_tokens="4"), JSON, 400, "contract",
     'invalid type: string "4", expected i64'),
    ("gen-ids-not-ints", "/generate", {"input_ids": [1, "a"]}, JSON, 400, "contract",
     'invalid type: string "a", expected i64'),
    # -- /generate, tokenizer manager: normalize_batch_and_arguments (io_struct.py)
    ("gen-no-prompt", "/generate", {"sampling_params": {}}, JSON, 400, "native",
     "Either text, input_ids or input_embeds should be provided."),
    ("gen-empty-ids", "/generate", {"input_ids": []}, JSON, 400, "native", "input_ids cannot be empty."),
    # -- the context length (tokenizer_manager.py _validate_one_request, lines 1307-1378): 8192 tokens
    ("gen-context-length", "/generate", gen(max_new_tokens=10_000_000), JSON, 400, "native",
     "Requested token count exceeds the model's maximum context length of 8192 tokens. You requested "
     "a total of 10000016 tokens: 16 tokens from the input messages and 10000000 tokens for the "
     "completion."),
    ("gen-input-too-long", "/generate", {"input_ids": [7] * 8192}, JSON, 400, "native",
     "The input (8192 tokens) is longer than the model's context length (8192 tokens)."),
    # -- SamplingParams.verify (srt/sampling/sampling_params.py lines 232-299)
    ("gen-top-p-0", "/generate", gen(top_p=0), JSON, 400, "native", "top_p must be in (0, 1], got 0."),
    ("gen-top-k-0", "/generate", gen(top_k=0, temperature=0.7), JSON, 400, "native",
     "top_k must be -1 (disable) or at least 1, got 0."),
    ("gen-negative-temperature", "/generate", gen(temperature=-1), JSON, 400, "native",
     "temperature must be a non-negative finite number, got -1."),
    ("gen-negative-max-new-tokens", "/generate", gen(max_new_tokens=-3), JSON, 400, "native",
     "max_new_tokens must be at least 0, got -3."),
    ("gen-min-above-max", "/generate", gen(min_new_tokens=9), JSON, 400, "native",
     "min_new_tokens must be in [0, max_new_tokens(4)], got 9."),
    ("gen-presence-penalty", "/generate", gen(presence_penalty=3), JSON, 400, "native",
     "presence_penalty must be in [-2, 2], got 3."),
    ("gen-two-grammars", "/generate", gen(regex="a", ebnf="b"), JSON, 400, "native",
     "Only one of json_schema, regex, ebnf, or structural_tag can be set."),
    ("gen-n-mismatch", "/generate", {"text": [PROMPT, PROMPT], "sampling_params": [{"n": 1}, {"n": 2}]},
     JSON, 400, "native", "The parallel_sample_num should be the same for all samples in sample params."),
    # -- served by SGLang, refused by the simulator (never a silent wrong answer)
    ("gen-stop", "/generate", gen(stop=["\n"]), JSON, 400, "native", NOT_IMPLEMENTED + " stop strings"),
    ("gen-logprobs", "/generate", {**gen(), "return_logprob": True}, JSON, 400, "native",
     NOT_IMPLEMENTED + " logprobs"),
    ("gen-regex", "/generate", gen(regex="[a-z]+"), JSON, 400, "native",
     NOT_IMPLEMENTED + " constrained decoding"),
    # -- accepted (SamplingParams.__post_init__: temperature 0 is greedy, top_k becomes 1)
    ("gen-greedy-top-k-0", "/generate", gen(top_k=0), JSON, 200, "ok", None),
    ("gen-null-sampling-values", "/generate", gen(top_p=None, top_k=None, ignore_eos=None), JSON, 200,
     "ok", None),
    ("gen-unknown-top-level-key", "/generate", {**gen(), "no_such_key": 1}, JSON, 200, "ok", None),
    # -- /v1/completions: validate_json_request (http_server.py line 695) before the body
    ("comp-text-plain", "/v1/completions", json.dumps(comp()).encode(), {"Content-Type": "text/plain"},
     400, "fastapi", "Unsupported Media Type: Only 'application/json' is allowed"),
    ("comp-not-json", "/v1/completions", b"{", JSON, 400, "fastapi", "'type': 'json_invalid'"),
    ("comp-no-prompt", "/v1/completions", {"model": "m"}, JSON, 400, "fastapi",
     "'type': 'missing', 'loc': ('body', 'prompt')"),
    ("comp-max-tokens-0", "/v1/completions", comp(max_tokens=0), JSON, 400, "fastapi",
     "Value error, max_tokens must be positive"),
    ("comp-stream-maybe", "/v1/completions", comp(stream="maybe"), JSON, 400, "fastapi",
     "'type': 'bool_parsing'"),
    ("comp-empty-prompt", "/v1/completions", comp(prompt=""), JSON, 400, "openai", "Prompt cannot be empty"),
    ("comp-top-p-0", "/v1/completions", comp(top_p=0), JSON, 400, "openai", "top_p must be in (0, 1], got 0.0."),
    ("comp-context-length", "/v1/completions", comp(max_tokens=10_000_000), JSON, 400, "openai",
     "Requested token count exceeds the model's maximum context length of 8192 tokens."),
    ("comp-logprobs", "/v1/completions", comp(logprobs=2), JSON, 400, "openai", NOT_IMPLEMENTED + " logprobs"),
    ("comp-stop", "/v1/completions", comp(stop="\n"), JSON, 400, "openai", NOT_IMPLEMENTED + " stop strings"),
    ("comp-echo", "/v1/completions", comp(echo=True), JSON, 400, "openai", NOT_IMPLEMENTED + " echo"),
    # several choices streamed, and a /generate batch streamed: SGLang serves them, interleaved by
    # index (tokenizer_manager.py _stream_batch_responses); shapes: test_sglang_answer_shapes.py
    ("comp-stream-n", "/v1/completions", comp(stream=True, n=2), JSON, 200, "ok", None),
    ("gen-stream-batch", "/generate", {"text": [PROMPT, PROMPT], "sampling_params": {"max_new_tokens": 4},
                                       "stream": True}, JSON, 200, "ok", None),
    # a list of sampling_params shorter than the prompts: SGLang has no length check; GenerateReqInput
    # .__getitem__ (io_struct.py line 982, ``self.sampling_params[i]``) raises IndexError when
    # tokenizer_manager.py _init_req_state (lines 3820-3831) builds each sub-request, which no route
    # catches (http_server.py lines 985-990 catch ValueError only): Starlette's 500 in plain text.
    # (A longer list is served, extras ignored: test_longer_sampling_params_list_ignores_extras.)
    ("gen-params-shorter", "/generate", {"text": [PROMPT, PROMPT], "sampling_params": [{"max_new_tokens": 4}]},
     JSON, 500, "plain", "Internal Server Error"),
    ("gen-params-shorter-n", "/generate", {"text": [PROMPT, PROMPT, PROMPT],
                                           "sampling_params": [{"max_new_tokens": 4, "n": 2}] * 2},
     JSON, 500, "plain", "Internal Server Error"),
    ("gen-params-empty", "/generate", {"text": [PROMPT], "sampling_params": []},
     JSON, 500, "plain", "Internal Server Error"),  # _handle_parallel_sampling: sampling_params[0]
    # one prompt (not a batch) with a list: it stays a list, and _validate_one_request's
    # ``obj.sampling_params.get("max_new_tokens")`` (tokenizer_manager.py line 1354) is an AttributeError
    ("gen-params-list-single", "/generate", {"text": PROMPT, "sampling_params": [{"max_new_tokens": 4}]},
     JSON, 500, "plain", "Internal Server Error"),
    ("comp-unknown-key", "/v1/completions", comp(no_such_key=1), JSON, 200, "ok", None),
    # LoRA without --enable-lora: tokenizer_manager.py _validate_and_resolve_lora (lines 3729-3740);
    # an adapter named in "model" (serving_base.py _parse_model_parameter, lines 40-60) too: the
    # simulator served "base:adapter" as if no adapter were named
    ("chat-model-adapter", "/v1/chat/completions", chat(model="base:adapter1"), JSON, 400, "openai",
     "LoRA adapter 'adapter1' was requested, but LoRA is not enabled. Please launch the server with "
     "--enable-lora flag and preload adapters using --lora-paths or /load_lora_adapter endpoint."),
    ("comp-lora-path", "/v1/completions", comp(lora_path="a1"), JSON, 400, "openai",
     "LoRA adapter 'a1' was requested, but LoRA is not enabled."),
    ("gen-lora-path", "/generate", {**gen(), "lora_path": "a1"}, JSON, 400, "native",
     "LoRA adapter 'a1' was requested, but LoRA is not enabled."),
    ("comp-model-no-adapter", "/v1/completions", comp(model="any-name"), JSON, 200, "ok", None),
    # -- /v1/chat/completions
    ("chat-empty-messages", "/v1/chat/completions", chat(messages=[]), JSON, 400, "openai",
     "Messages cannot be empty."),
    # serving_chat.py _validate_request (lines 1180-1190): max_completion_tokens or max_tokens over the
    # context length, before the tokenizer manager's input + output check (the simulator answered that)
    ("chat-max-completion-tokens-over-context", "/v1/chat/completions", chat(max_completion_tokens=10_000), JSON,
     400, "openai", "max_completion_tokens is too large: 10000.This model supports at most 8192 completion tokens."),
    ("chat-max-tokens-over-context", "/v1/chat/completions", chat(max_tokens=9000), JSON, 400, "openai",
     "max_completion_tokens is too large: 9000.This model supports at most 8192 completion tokens."),
    # protocol.py lines 754-807: each message is ChatCompletionMessageGenericParam (a role of its list,
    # any case) or ChatCompletionMessageUserParam (role "user", content required); the simulator took
    # any dict and answered 200
    ("chat-role-unknown", "/v1/chat/completions", chat(messages=[{"role": "human", "content": "hi"}]), JSON, 400,
     "fastapi", "'role' must be one of 'system', 'assistant', 'tool', 'function', 'developer', 'latest_reminder', "
     "'root' (case-insensitive)."),
    ("chat-user-no-content", "/v1/chat/completions", chat(messages=[{"role": "user"}]), JSON, 400, "fastapi",
     "'type': 'missing', 'loc': ('body', 'messages', 0, 'function-after[validate_thinking_parts_role(), "
     "ChatCompletionMessageUserParam]', 'content')"),
    ("chat-message-not-object", "/v1/chat/completions", chat(messages=["hi"]), JSON, 400, "fastapi",
     "'type': 'model_type'"),
    ("chat-text-part-without-text", "/v1/chat/completions",
     chat(messages=[{"role": "system", "content": [{"type": "text"}]}, {"role": "user", "content": "hi"}]), JSON, 400,
     "fastapi", "'type': 'missing', 'loc': ('body', 'messages', 0, 'function-after[validate_thinking_parts_role(), "
     "ChatCompletionMessageGenericParam]', 'content', 'list[union[ChatCompletionMessageContentTextPart,"),
    # serving_chat.py _validate_media_content (lines 1199-1219): SGLang refuses media on a text-only
    # model and serves it on a multimodal one; the simulator answered from the text parts alone
    ("chat-image-part", "/v1/chat/completions", chat(messages=[{"role": "user", "content": [
        {"type": "text", "text": "what is this?"}, {"type": "image_url", "image_url": {"url": "http://x/a.png"}}]}]),
     JSON, 400, "openai", NOT_IMPLEMENTED + " multimodal inputs (content part type 'image_url')"),
    # accepted: any role's case (GenericParam lowercases it), an assistant turn without content, a
    # system prompt alone (the template renders it; SGLang generates from there)
    ("chat-role-case", "/v1/chat/completions", chat(messages=[{"role": "SYSTEM", "content": "Be brief."},
                                                               {"role": "user", "content": "hi"}]), JSON, 200, "ok", None),
    ("chat-assistant-null-content", "/v1/chat/completions", chat(messages=[
        {"role": "user", "content": "hi"}, {"role": "assistant", "content": None}, {"role": "user", "content": "?"}]),
     JSON, 200, "ok", None),
    ("chat-system-only", "/v1/chat/completions", chat(messages=[{"role": "system", "content": "Be brief."}]), JSON,
     200, "ok", None),
    ("chat-no-messages", "/v1/chat/completions", {"model": "m"}, JSON, 400, "fastapi",
     "'type': 'missing', 'loc': ('body', 'messages')"),
    ("chat-logprobs", "/v1/chat/completions", chat(logprobs=True), JSON, 400, "openai",
     NOT_IMPLEMENTED + " logprobs"),
    ("chat-text-plain", "/v1/chat/completions", json.dumps(chat()).encode(), {"Content-Type": "text/plain"},
     400, "fastapi", "Unsupported Media Type"),
]


@pytest.fixture(scope="module")
def sim():
    with running_sim(speedup=200.0) as s:
        yield s


def _post(url: str, body, headers: dict) -> requests.Response:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return requests.post(url, data=data, headers=headers, timeout=30)


@pytest.mark.parametrize("case, route, body, headers, status, shape, text", ROWS, ids=[r[0] for r in ROWS])
def test_request_gets_sglangs_status_and_body(sim, case, route, body, headers, status, shape, text):
    r = _post(sim.url + route, body, headers)
    assert r.status_code == status, r.text
    if shape == "plain":  # starlette ServerErrorMiddleware.error_response: PlainTextResponse
        assert r.headers["Content-Type"] == "text/plain; charset=utf-8"
        assert r.text == text
        return
    if r.headers["Content-Type"].startswith("text/event-stream"):  # a stream served
        assert shape == "ok" and r.text.endswith("data: [DONE]\n\n"), r.text[-300:]
        return
    out = r.json()
    if shape == "ok":
        return
    if shape == "fastapi":
        assert set(out) == {"object", "message", "type", "param", "code"}
        assert (out["object"], out["type"], out["param"], out["code"]) == ("error", "Bad Request", None, 400)
        # one error, or several: a union reports each member's (a bad content part: 27 of them)
        assert re.fullmatch(r"1 validation error|([2-9]|[1-9]\d+) validation errors", out["message"].split(":", 1)[0])
        assert text in out["message"]
        assert f"    POST {route}" in out["message"]  # FastAPI's endpoint context
    elif shape == "contract":
        assert out == {"error": text}
    elif shape == "native":
        assert set(out) == {"error"} and set(out["error"]) == {"message"}
        assert out["error"]["message"].startswith(text)
    elif shape == "openai":
        assert (out["object"], out["type"], out["param"], out["code"]) == ("error", "BadRequestError", None, 400)
        assert out["message"].startswith(text)


def test_refused_requests_leave_no_work_behind(sim):
    for _, route, body, headers, status, *_ in ROWS:
        if status != 200:
            _post(sim.url + route, body, headers)
    assert requests.post(sim.url + "/flush_cache", timeout=10).status_code == 200


def test_n_is_parallel_sampling(sim):
    """io_struct.py _handle_parallel_sampling: one prompt with n > 1 becomes a batch of n outputs."""
    out = _post(sim.url + "/generate", {"text": PROMPT, "sampling_params": {
        "max_new_tokens": 6, "temperature": 0.8, "n": 3}}, JSON).json()
    assert isinstance(out, list) and len(out) == 3
    assert all(o["meta_info"]["completion_tokens"] == 6 for o in out)
    assert len({tuple(o["output_ids"]) for o in out}) == 3  # sampled: three continuations
    greedy = _post(sim.url + "/generate", {"text": PROMPT, "sampling_params": {
        "max_new_tokens": 6, "temperature": 0, "n": 2}}, JSON).json()
    assert greedy[0]["output_ids"] == greedy[1]["output_ids"]


def test_n_below_one_or_null_is_what_sglangs_parallel_sampling_makes_of_it(sim):
    """io_struct.py _handle_parallel_sampling (lines 531-552) compares n with 1 as sent and
    SamplingParams never checks it: n <= 0 leaves one prompt single, one output (the simulator built
    no output and crashed with aiohttp's own 500 page); a batch is repeated n times, none left, and
    tokenizer_manager.py line 2125's obj[i] is an IndexError; a null n is a TypeError (None > 1;
    the simulator served it as n 1). The 500s are Starlette's plain text."""
    for n in (0, -1):
        one = _post(sim.url + "/generate", gen(n=n), JSON)
        assert one.status_code == 200, one.text
        assert one.json()["meta_info"]["completion_tokens"] == 4  # one object, not a list
    for body in ({"text": [PROMPT, PROMPT], "sampling_params": {"max_new_tokens": 4, "n": 0}}, gen(n=None),
                 {"text": PROMPT, "sampling_params": [{"max_new_tokens": 4, "n": 0}]}):
        r = _post(sim.url + "/generate", body, JSON)
        assert (r.status_code, r.headers["Content-Type"], r.text) == (
            500, "text/plain; charset=utf-8", "Internal Server Error"), body
    assert requests.post(sim.url + "/flush_cache", timeout=10).status_code == 200  # nothing left running


def test_longer_sampling_params_list_ignores_extras(sim):
    """A list longer than the prompts is served: prompt i takes sampling_params[i] and the extras are
    never read (io_struct.py _normalize_sampling_params line 747 repeats the list n times;
    tokenizer_manager.py _handle_batch_request builds prompt i from obj[i], lines 2091 and 2125).
    An extra is not even verified (SamplingParams.verify runs per sub-request, line 1567)."""
    extras = [{"max_new_tokens": 9, "temperature": -1.0}]
    out = _post(sim.url + "/generate", {"text": [PROMPT, "Write a haiku."], "sampling_params": [
        {"max_new_tokens": 3, "temperature": 0}, {"max_new_tokens": 5, "temperature": 0}, *extras]}, JSON)
    assert out.status_code == 200, out.text
    assert [o["meta_info"]["completion_tokens"] for o in out.json()] == [3, 5]
    # with n > 1, prompt-major, n outputs each, still prompt i's parameters
    out = _post(sim.url + "/generate", {"text": [PROMPT, "Write a haiku."], "sampling_params": [
        {"max_new_tokens": 3, "n": 2}, {"max_new_tokens": 5, "n": 2}, {"max_new_tokens": 9, "n": 2}]}, JSON)
    assert out.status_code == 200, out.text
    assert [o["meta_info"]["completion_tokens"] for o in out.json()] == [3, 3, 5, 5]
    # every entry's n must agree, extras included (_handle_parallel_sampling, lines 541-545)
    out = _post(sim.url + "/generate", {"text": [PROMPT], "sampling_params": [
        {"max_new_tokens": 3}, {"max_new_tokens": 5, "n": 2}]}, JSON)
    assert out.status_code == 400
    assert out.json() == {"error": {"message": "The parallel_sample_num should be the same for all "
                                               "samples in sample params."}}


def test_openai_batched_prompts_and_n(sim):
    """serving_completions.py: a list of prompts is one batch; choices are prompt-major, n each;
    usage counts each prompt once (usage_processor.py calculate_response_usage)."""
    out = _post(sim.url + "/v1/completions", comp(prompt=[PROMPT, "Write a haiku."], n=2,
                                                  temperature=0.5), JSON).json()
    assert [c["index"] for c in out["choices"]] == [0, 1, 2, 3]
    single = _post(sim.url + "/v1/completions", comp(), JSON).json()
    haiku = _post(sim.url + "/v1/completions", comp(prompt="Write a haiku."), JSON).json()
    assert out["usage"]["completion_tokens"] == 4 * 4
    assert out["usage"]["prompt_tokens"] == single["usage"]["prompt_tokens"] + haiku["usage"]["prompt_tokens"]
    ids = _post(sim.url + "/v1/completions", comp(prompt=[[5, 6, 7], [8, 9]]), JSON).json()
    assert len(ids["choices"]) == 2 and ids["usage"]["prompt_tokens"] == 5


def test_context_length_is_reported(sim):
    models = requests.get(sim.url + "/v1/models", timeout=10).json()
    assert models["data"][0]["max_model_len"] == 8192
    info = requests.get(sim.url + "/server_info", timeout=10).json()
    assert info["context_length"] == 8192 and info["max_req_input_len"] <= 8191


def test_speculative_reserves_draft_slots_in_the_context():
    """managers/utils.py compute_num_reserved_tokens: EAGLE adds max(topk * steps, draft tokens)."""
    with running_sim("--speculative-algorithm", "EAGLE3", "--speculative-num-steps", "3",
                     "--speculative-eagle-topk", "4", "--speculative-num-draft-tokens", "16",
                     "--context-length", "64", speedup=200.0) as s:
        r = _post(s.url + "/generate", {"input_ids": [7] * 40, "sampling_params": {"max_new_tokens": 9}}, JSON)
        assert r.status_code == 400
        assert ("You requested a total of 65 tokens: 56 tokens from the input messages and 9 tokens"
                in r.json()["error"]["message"])
        ok = _post(s.url + "/generate", {"input_ids": [7] * 40, "sampling_params": {"max_new_tokens": 8}}, JSON)
        assert ok.status_code == 200


def test_chat_max_completion_tokens_0_falls_through_to_max_tokens(sim):
    """protocol.py to_sampling_params (line 1214): ``max_completion_tokens or max_tokens``, so a 0
    is no limit of its own (the simulator generated 0 tokens)."""
    out = _post(sim.url + "/v1/chat/completions", chat(max_completion_tokens=0, max_tokens=3), JSON)
    assert out.status_code == 200, out.text
    assert out.json()["usage"]["completion_tokens"] == 3


def test_lora_with_lora_on_is_refused_as_not_implemented():
    """--lora-paths alone turns LoRA on (arg_groups/lora_hook.py lines 38-43): SGLang would then run
    the adapter, which the simulator cannot, so it refuses in SGLang's shape; the served name itself
    names no adapter (serving_base.py line 50). (A served name with a colon SGLang 0.5.23 refuses at
    launch, validation_hook.py line 214: tests/sglang/test_launch_checks_other_args.py.)"""
    with running_sim("--lora-paths", "a1=/nowhere", "--served-model-name", "org/m-v2", speedup=200.0) as s:
        r = _post(s.url + "/v1/chat/completions", chat(model="org/m-v2:a1"), JSON)
        assert r.status_code == 400 and r.json()["message"].startswith(NOT_IMPLEMENTED + " LoRA adapters"), r.text
        assert _post(s.url + "/v1/chat/completions", chat(model="org/m-v2"), JSON).status_code == 200


@pytest.mark.parametrize("route, body", [
    ("/generate", {"input_ids": [7] * 8150, "sampling_params": {"temperature": 0}}),
    ("/v1/chat/completions", {"messages": [{"role": "user", "content": "w " * 16_290}], "temperature": 0}),
])
def test_no_max_tokens_near_the_context_is_clamped_not_refused(sim, route, body):
    """tokenizer_manager.py _validate_one_request checks input + max_new_tokens only when the request
    set max_new_tokens itself (line 1354); otherwise the scheduler clamps the output to what the
    context has left (scheduler.py init_req_max_new_tokens: max_req_len - input - 1, max_req_len being
    the context - 1, tp_worker.py get_worker_info). The simulator checked its default (128 tokens) and
    refused with "Requested token count exceeds ..."."""
    r = _post(sim.url + route, body, JSON)
    assert r.status_code == 200, r.text
    out = r.json()
    usage = out["meta_info"] if route == "/generate" else out["usage"]
    assert usage["completion_tokens"] == 8192 - 2 - usage["prompt_tokens"] < 128


@pytest.mark.parametrize("route, body, message", [
    ("/generate", gen(max_new_tokens=10_000_000, top_p=0),
     "Requested token count exceeds the model's maximum context length of 8192 tokens."),
    ("/generate", {"input_ids": [7] * 8192, "sampling_params": {"top_p": 0}},
     "The input (8192 tokens) is longer than the model's context length (8192 tokens)."),
    ("/v1/completions", comp(max_tokens=10_000, top_p=0),
     "Requested token count exceeds the model's maximum context length of 8192 tokens."),
])
def test_the_context_check_comes_before_the_sampling_check(sim, route, body, message):
    """tokenizer_manager.py _tokenize_one_request: _validate_one_request (line 1271) before
    _create_tokenized_object's SamplingParams.verify (line 1272 -> 1566), so a request failing both
    gets the context message; the simulator gave verify's. (Not a row of ROWS: the
    tools/sglang_request_table.py check runs SGLang's contract and verify only, not the context.)"""
    r = _post(sim.url + route, body, JSON)
    assert r.status_code == 400
    out = r.json()
    assert (out["error"]["message"] if route == "/generate" else out["message"]).startswith(message)


def test_preferred_sampling_params_go_under_the_requests_own():
    """--preferred-sampling-params (tokenizer_manager.py _create_tokenized_object, lines 1549-1552):
    ``{**preferred, **request's sampling_params}`` before SamplingParams is built and verified; the
    OpenAI routes set every key themselves (serving_completions.py _build_sampling_params), so
    there it changes nothing the simulator reads. /model_info reports them
    (http_server.py model_info). The simulator parsed the flag and ignored it."""
    with running_sim("--preferred-sampling-params", '{"max_new_tokens": 5, "temperature": 0}', speedup=200.0) as s:
        out = _post(s.url + "/generate", {"text": PROMPT}, JSON).json()
        assert out["meta_info"]["completion_tokens"] == 5
        again = _post(s.url + "/generate", {"text": PROMPT}, JSON).json()
        assert again["output_ids"] == out["output_ids"]  # temperature 0 from the preferred params: greedy
        assert _post(s.url + "/generate", gen(max_new_tokens=3), JSON).json()["meta_info"]["completion_tokens"] == 3
        info = requests.get(s.url + "/model_info", timeout=10).json()
        assert info["preferred_sampling_params"] == {"max_new_tokens": 5, "temperature": 0}
    with running_sim("--preferred-sampling-params", '{"top_p": 0}', speedup=200.0) as s:
        r = _post(s.url + "/generate", gen(), JSON)
        assert r.status_code == 400 and r.json() == {"error": {"message": "top_p must be in (0, 1], got 0."}}
        assert _post(s.url + "/v1/completions", comp(), JSON).status_code == 200
