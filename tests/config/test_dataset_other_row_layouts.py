"""Rows of other common layouts in a ``.jsonl`` are refused at their first line with the jq line
that makes the tuner's rows of them (QA: each was "unknown key; expected prompt or messages, ..."
naming the layout's key alone; a question-answer row was refused for its answer first, and for its
question after that: two tries): an OpenAI Batch API input file (``custom_id``, ``method``, ``url``,
``body``), a Hugging Face text dataset (``text``), a question-answer set (``question``, ``answer``).
A request row with one such key beside its prompt is still refused for the key alone."""

import json
import shlex

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

BATCH = {"custom_id": "request-1", "method": "POST", "url": "/v1/chat/completions",
         "body": {"model": "gpt-3.5-turbo-0125", "messages": [{"role": "user", "content": "Hello world!"}],
                  "max_tokens": 100}}


def _refusal(tmp_path, name: str, row: dict) -> str:
    (tmp_path / name).write_text(json.dumps(row) + "\n")
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": name}}, tmp_path)
    return str(err.value)


@pytest.mark.parametrize("row, key, says, jq, written", [
    (BATCH, "body", "an OpenAI Batch API input line (custom_id, method, url, body): the request is its body",
     ".body | {messages, max_tokens}", {"messages": BATCH["body"]["messages"], "max_tokens": 100}),
    ({"custom_id": "r1", "method": "POST", "url": "/v1/completions",
      "body": {"model": "m", "prompt": "Once upon a time", "max_tokens": 16}}, "body",
     "an OpenAI Batch API input line (custom_id, method, url, body): the request is its body",
     ".body | {prompt, max_tokens}", {"prompt": "Once upon a time", "max_tokens": 16}),
    ({"text": "The quick brown fox"}, "text", "a text column, as Hugging Face text datasets have it: give it as "
     "prompt", "{prompt: .text}", {"prompt": "The quick brown fox"}),
    ({"question": "What is 2+2?", "answer": "4"}, "question", "a question-answer row: give the question as prompt, "
     "and its answer's length in tokens as max_tokens if you know it", "{prompt: .question}",
     {"prompt": "What is 2+2?"}),
], ids=["batch-chat", "batch-completions", "text", "question"])
def test_a_row_of_another_layout_says_the_jq_line_that_makes_requests(tmp_path, row, key, says, jq, written):
    data, lines = tmp_path / "my log.jsonl", tmp_path / "my log.lines.jsonl"
    said = _refusal(tmp_path, data.name, row)
    command = f"jq -c '{jq}' {shlex.quote(str(data))} > {shlex.quote(str(lines))}"
    assert said == (f"{data}: line 1: {key}: {says} ({command} writes them so; give that file as dataset.path)")
    assert shlex.split(command) == ["jq", "-c", jq, str(data), ">", str(lines)]
    # what jq writes (the keys asked for) is read as the request the row held
    lines.write_text(json.dumps(written) + "\n")
    prompt = load_suite({"name": "t", "dataset": {"path": lines.name}}, tmp_path).prompts[0]
    assert (prompt.text if "prompt" in written else [m.model_dump() for m in prompt.messages]) == \
        written.get("prompt", written.get("messages"))


def test_a_request_row_with_such_a_key_beside_its_prompt_is_refused_for_the_key(tmp_path):
    assert _refusal(tmp_path, "d.jsonl", {"prompt": "hello there", "text": "an extra"}) == (
        f"{tmp_path / 'd.jsonl'}: line 1: text: unknown key; expected prompt or messages, and optionally max_tokens, "
        "category (or name), id")
