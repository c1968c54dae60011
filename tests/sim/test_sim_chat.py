"""The simulator's chat endpoint as SGLang answers it: acceptance judged on the messages' content
(not the template around them), and ``sglext.spec_tokens_details`` where SGLang 0.5.23 puts it."""

from __future__ import annotations

import json

from tuner.sim.openai_format import OpenAIFormatter, spec_tokens_details
from tuner.sim.requests import ContextCheck, parse_chat

BODY = {"messages": [{"role": "system", "content": "Reply in JSON."}, {"role": "user", "content": "List 3 primes."}],
        "max_completion_tokens": 8, "temperature": 0}


def test_chat_acceptance_comes_from_the_messages_content():
    parsed = parse_chat(json.dumps({**BODY, "return_spec_tokens_details": True}).encode(), "application/json",
                        ContextCheck(4096, 4, lambda text: len(text) // 4))
    spec, stream = parsed.specs[0], parsed.stream
    assert parsed.spec_details is True
    assert spec.acceptance_text == "Reply in JSON.\n\nList 3 primes."  # what /generate gets for it
    assert spec.text.endswith("assistant:") and "system: Reply in JSON." in spec.text  # the template
    assert spec.max_new_tokens == 8 and spec.greedy and not stream


def test_sglext_goes_top_level_or_in_its_own_chunk_before_usage():
    meta = {"spec_verify_ct": 4, "spec_accept_length": 2.0, "spec_accept_rate": 0.33}
    details = spec_tokens_details(meta)
    assert details["spec_verify_ct"] == 4 and details["spec_cap_lens_histogram"] == []
    assert spec_tokens_details({"completion_tokens": 3}) is None  # no speculation: no sglext
    fmt = OpenAIFormatter(chat=True, model="m", rid="r")
    body = fmt.response([("hi", 3, 8)], 1, {"spec_tokens_details": details})
    assert body["sglext"]["spec_tokens_details"]["spec_accept_length"] == 2.0
    assert "sglext" not in fmt.response([("hi", 3, 8)])
    chunks = fmt.stream_chunks("!", 3, 8, True, False, {"include_usage": True}, {"spec_tokens_details": details})
    # SGLang 0.5.23 serving_chat.py: the text, then the finish reason in a chunk of its own (lines
    # 2641-2662), then sglext, then usage
    assert chunks[0]["choices"][0]["delta"] == {"reasoning_content": None, "content": "!"}
    assert chunks[0]["choices"][0]["finish_reason"] is None and "usage" not in chunks[0]
    assert chunks[1]["choices"][0]["delta"] == {"reasoning_content": None}
    assert chunks[1]["choices"][0]["finish_reason"] == "length" and "usage" not in chunks[1]
    assert chunks[2]["choices"] == [] and chunks[2]["sglext"]["spec_tokens_details"]["spec_verify_ct"] == 4
    assert chunks[3]["choices"] == [] and chunks[3]["usage"]["completion_tokens"] == 8 and "sglext" not in chunks[3]


def test_a_chat_stream_is_shaped_as_sglangs():
    """serving_chat.py and sse_utils.py (SGLang 0.5.23): a role chunk first, each step's text with the
    usage so far (continuous_usage_stats), the finish reason last in a chunk of its own; the
    simulator sent it on the last text chunk, so a client that read it only there ran on the simulator
    only."""
    fmt = OpenAIFormatter(chat=True, model="m", rid="r")
    options = {"continuous_usage_stats": True}
    first = fmt.stream_chunks("a", 3, 1, False, True, options)
    last = fmt.stream_chunks(" b", 3, 2, True, False, options)
    assert [c["choices"][0]["delta"] for c in first + last] == [
        {"reasoning_content": None, "role": "assistant", "content": ""}, {"reasoning_content": None, "content": "a"},
        {"reasoning_content": None, "content": " b"}, {"reasoning_content": None}]
    assert [c["choices"][0]["finish_reason"] for c in first + last] == [None, None, None, "length"]
    assert [c.get("usage", {}).get("completion_tokens") for c in first + last] == [None, 1, 2, None]
