"""Rows logged from other APIs' requests in a ``.jsonl`` are refused at their line naming the layout,
with a ``jq`` line that makes the tuner's rows of them, their output lengths kept (QA qa152: each was
"unknown key; expected prompt or messages ..."). The jq line is run, with the real ``jq`` where it is
installed, and what it writes is loaded; without jq its text is checked."""

import json
import re
import shlex
import shutil
import subprocess

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

JQ = shutil.which("jq")


def _refusal(tmp_path, row: dict, name: str = "my log.jsonl") -> str:
    (tmp_path / name).write_text(json.dumps(row) + "\n")
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": name}}, tmp_path)
    return str(err.value)


def _converted(tmp_path, said: str, name: str = "my log.jsonl"):
    """The requests the refusal's jq line makes of the file: the line run (jq's argv, its output to the
    file named after '>'), and the file it writes loaded; None where jq is not installed."""
    found = re.search(r"\((jq -c .*?) writes them so; give that file as dataset\.path", said)
    assert found, said
    words = shlex.split(found.group(1))
    assert words[:2] == ["jq", "-c"] and words[3:] == [str(tmp_path / name), ">",
                                                     str(tmp_path / name.replace(".jsonl", ".lines.jsonl"))], words
    if JQ is None:
        return None
    with open(words[5], "w") as out:
        subprocess.run([JQ, "-c", words[2], words[3]], stdout=out, check=True, timeout=30)
    return load_suite({"name": "t", "dataset": {"path": words[5]}}, tmp_path).prompts


def _turns(prompt) -> list[tuple[str, str]]:
    return [(m.role, " ".join(p.text for p in m.content) if isinstance(m.content, list) else m.content)
            for m in prompt.messages]


GEMINI = {"systemInstruction": {"parts": [{"text": "Be brief."}]},
          "contents": [{"role": "user", "parts": [{"text": "Name a colour."}]},
                       {"role": "model", "parts": [{"text": "Blue."}]},
                       {"role": "user", "parts": [{"text": "Another"}, {"text": "one?"}]}],
          "generationConfig": {"maxOutputTokens": 64, "temperature": 0.2}}


@pytest.mark.parametrize("row, key, unwrap", [
    (GEMINI, "contents", lambda r: r),
    ({"key": "request-1", "request": GEMINI}, "request", lambda r: r["request"]),
    ({"contents": GEMINI["contents"][:1], "generation_config": {"max_output_tokens": 64}}, "contents",
     lambda r: {**r, "generationConfig": {"maxOutputTokens": 64}}),
], ids=["request", "batch-line", "python-sdk-spelling"])
def test_a_gemini_request_row_names_its_layout_and_the_jq_line_keeps_its_turns_and_length(tmp_path, row, key, unwrap):
    said = _refusal(tmp_path, row)
    assert said.startswith(f"{tmp_path / 'my log.jsonl'}: line 1: {key}: a Gemini API "), said
    prompts = _converted(tmp_path, said)
    if prompts is None:
        return
    request = unwrap(row)
    want = ([("system", "Be brief.")] if "systemInstruction" in request else []) + [
        ("assistant" if c["role"] == "model" else c["role"], " ".join(p["text"] for p in c["parts"]))
        for c in request["contents"]]
    assert _turns(prompts[0]) == want
    assert prompts[0].max_tokens == request["generationConfig"]["maxOutputTokens"]


def test_a_gemini_row_without_a_length_reads_as_the_default_length(tmp_path):
    prompts = _converted(tmp_path, _refusal(tmp_path, {"contents": [{"parts": [{"text": "Hi there"}]}]}))
    if prompts is not None:
        assert _turns(prompts[0]) == [("user", "Hi there")] and prompts[0].max_tokens == 256


def _batch(body: dict) -> dict:
    return {"custom_id": "request-1", "method": "POST", "url": "/v1/responses", "body": body}


@pytest.mark.parametrize("body, want", [
    ({"model": "gpt-4o-mini", "input": "Tell me a joke.", "max_output_tokens": 50}, [("user", "Tell me a joke.")]),
    ({"model": "gpt-4o-mini", "instructions": "Be brief.", "max_output_tokens": 50,
      "input": [{"role": "user", "content": [{"type": "input_text", "text": "Name a colour."}]},
                {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Blue."}]},
                {"role": "user", "content": "Another?"}]},
     [("system", "Be brief."), ("user", "Name a colour."), ("assistant", "Blue."), ("user", "Another?")]),
], ids=["text-input", "items"])
def test_a_responses_api_batch_line_names_its_layout_and_the_jq_line_keeps_its_turns_and_length(tmp_path, body, want):
    said = _refusal(tmp_path, _batch(body))
    assert said.startswith(f"{tmp_path / 'my log.jsonl'}: line 1: body: an OpenAI Batch API input line for the "
                           "Responses API"), said
    prompts = _converted(tmp_path, said)
    if prompts is not None:
        assert _turns(prompts[0]) == want and prompts[0].max_tokens == 50


@pytest.mark.parametrize("key", ["max_new_tokens", "max_output_tokens", "max_completion_tokens"])
@pytest.mark.parametrize("request_", [{"prompt": "Write a haiku."},
                                      {"messages": [{"role": "user", "content": "Write a haiku."}]}],
                         ids=["prompt", "messages"])
def test_a_length_under_another_apis_name_gets_the_jq_line_that_keeps_it(tmp_path, key, request_):
    rows = [{**request_, key: 48}, {**request_, "max_tokens": 20}]  # a row without the key keeps its own
    (tmp_path / "my log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "my log.jsonl"}}, tmp_path)
    said = str(err.value)
    assert said.startswith(f"{tmp_path / 'my log.jsonl'}: line 1: {key}: write the request's output length as "
                           f"max_tokens, {key} being another API's name for it"), said
    prompts = _converted(tmp_path, said)
    if prompts is not None:
        assert [(p.text, p.max_tokens) for p in prompts] == [("Write a haiku.", 48), ("Write a haiku.", 20)]


def test_a_logged_request_with_a_length_under_another_name_keeps_it_in_the_jq_line(tmp_path):
    # the request fields' line named first ({prompt, max_tokens} dropped max_new_tokens: the default length)
    said = _refusal(tmp_path, {"prompt": "Write a haiku.", "temperature": 0.7, "max_new_tokens": 48})
    assert "jq -c '{prompt, max_tokens: (.max_tokens // .max_new_tokens)}'" in said, said


def _sdk_turn(content, **keys) -> dict:
    # every field of a message as OpenAI's SDK returns it (message.model_dump())
    return {"role": "assistant", "content": content, "refusal": None, "annotations": [], "audio": None,
            "function_call": None, "tool_calls": None, **keys}


@pytest.mark.parametrize("turn, key, text", [
    (_sdk_turn(None, refusal="I can't help with that."), "refusal", "I can't help with that."),
    (_sdk_turn("See the docs.", annotations=[{"type": "url_citation", "url_citation": {
        "url": "https://example.com", "title": "Docs", "start_index": 4, "end_index": 13}}]),
     "annotations", "See the docs."),
], ids=["refusal", "annotations"])
def test_an_sdk_logged_turn_with_a_refusal_or_annotations_gets_the_jq_line_that_keeps_its_text(tmp_path, turn,
                                                                                                key, text):
    rows = [{"messages": [{"role": "user", "content": "Help me."}, turn, {"role": "user", "content": "Why?"}],
             "max_tokens": 32}, {"prompt": "A row of text.", "max_tokens": 16}]
    (tmp_path / "my log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "my log.jsonl"}}, tmp_path)
    said = str(err.value)
    assert said.startswith(f"{tmp_path / 'my log.jsonl'}: line 1: messages[1].{key}: a turn logged as OpenAI's "
                           "SDK returns it"), said
    prompts = _converted(tmp_path, said)
    if prompts is not None:
        assert _turns(prompts[0]) == [("user", "Help me."), ("assistant", text), ("user", "Why?")]
        assert [p.max_tokens for p in prompts] == [32, 16] and prompts[1].text == "A row of text."


ANTHROPIC = {"model": "claude-sonnet-4-5", "max_tokens": 40,
             "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
             "messages": [{"role": "user", "content": [{"type": "text", "text": "Name a colour."}]},
                          {"role": "assistant", "content": "Blue."}, {"role": "user", "content": "Another?"}]}
WANT = [("system", "Be brief."), ("user", "Name a colour."), ("assistant", "Blue."), ("user", "Another?")]


@pytest.mark.parametrize("row, key, says, want", [
    (ANTHROPIC, "model", "an Anthropic Messages API request (system beside messages)", WANT),
    ({k: v for k, v in ANTHROPIC.items() if k != "model"} | {"system": "Be brief."}, "system",
     "an Anthropic Messages API request (system beside messages)", WANT),
    ({"custom_id": "r1", "params": ANTHROPIC}, "custom_id", "an Anthropic Message Batches line (custom_id, params)",
     WANT),
    ({"custom_id": "r1", "params": {k: v for k, v in ANTHROPIC.items() if k != "system"}}, "custom_id",
     "an Anthropic Message Batches line (custom_id, params)", WANT[1:]),
], ids=["logged-request", "no-model", "batch-line", "batch-line-no-system"])
def test_an_anthropic_request_keeps_its_system_prompt_and_length_in_the_jq_line(tmp_path, row, key, says, want):
    # QA: with its "model" the logged OpenAI request's line, {messages, max_tokens}, dropped the system prompt
    said = _refusal(tmp_path, row)
    assert said.startswith(f"{tmp_path / 'my log.jsonl'}: line 1: {key}: {says}"), said
    prompts = _converted(tmp_path, said)
    if prompts is not None:
        assert _turns(prompts[0]) == want and prompts[0].max_tokens == 40


DOLLY = [{"instruction": "When was the tower built?", "context": "The tower was built in 1889 for a fair.",
          "response": "In 1889.", "category": "closed_qa"},
         {"instruction": "Name a colour.", "context": "", "response": "Blue.", "category": "open_qa"}]
DOLLY_PROMPTS = [("When was the tower built?\n\nThe tower was built in 1889 for a fair.", "closed_qa"),
                 ("Name a colour.", "open_qa")]


def test_a_dolly_row_keeps_its_context_in_the_jq_line(tmp_path):
    # QA: Alpaca's line, [.instruction, .input], sent every closed-QA row without the text it asks about
    (tmp_path / "my log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in DOLLY))
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "my log.jsonl"}}, tmp_path)
    said = str(err.value)
    assert said.startswith(f"{tmp_path / 'my log.jsonl'}: line 1: instruction: an instruction-tuning row of Dolly's "
                           "layout (instruction, context, response, category)"), said
    prompts = _converted(tmp_path, said)
    if prompts is not None:
        assert [(p.text, p.category) for p in prompts] == DOLLY_PROMPTS


def test_a_json_list_of_dolly_rows_keeps_their_context_in_the_jq_line(tmp_path):
    (tmp_path / "dolly.json").write_text(json.dumps(DOLLY))
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "dolly.json"}}, tmp_path)
    said = str(err.value)
    found = re.search(r"of Dolly's layout \(instruction, context, response, category\): write each as a prompt on "
                      r"its own line \((jq -c .*?)\) and give that file as dataset\.path$", said)
    assert found, said
    words = shlex.split(found.group(1))
    assert words[3:] == [str(tmp_path / "dolly.json"), ">", str(tmp_path / "dolly.lines.jsonl")], words
    if JQ is not None:
        with open(words[5], "w") as out:
            subprocess.run([JQ, "-c", words[2], words[3]], stdout=out, check=True, timeout=30)
        prompts = load_suite({"name": "t", "dataset": {"path": words[5]}}, tmp_path).prompts
        assert [(p.text, p.category) for p in prompts] == DOLLY_PROMPTS


def test_an_mt_bench_question_file_gets_the_jq_line_that_makes_its_first_turns_requests(tmp_path):
    rows = [{"question_id": 81, "category": "writing", "turns": ["Compose a travel blog post.", "Rewrite it."]},
            {"question_id": 111, "category": "math", "turns": ["What is 3+4?", "And times 2?"], "reference": ["7", "14"]}]
    (tmp_path / "my log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "my log.jsonl"}}, tmp_path)
    said = str(err.value)
    assert said.startswith(f"{tmp_path / 'my log.jsonl'}: line 1: turns: an MT-Bench question (question_id, "
                           "category, turns): its first turn is the request"), said
    prompts = _converted(tmp_path, said)
    if prompts is not None:
        assert [(p.name, p.text, p.category) for p in prompts] == [
            ("81", "Compose a travel blog post.", "writing"), ("111", "What is 3+4?", "math")]


def _lm_eval_sample(i: int, arg_1) -> dict:
    # a line of lm-evaluation-harness's --log_samples output (samples_gsm8k_*.jsonl)
    return {"doc_id": i, "doc": {"question": f"What is {i}+{i}?", "answer": str(2 * i)}, "target": str(2 * i),
            "arguments": {"gen_args_0": {"arg_0": f"Question: What is {i}+{i}?\nAnswer:", "arg_1": arg_1}},
            "resps": [["4"]], "filtered_resps": ["4"], "filter": "strict-match", "metrics": ["exact_match"]}


def test_an_lm_eval_samples_file_gets_the_jq_line_that_keeps_prompt_and_max_gen_toks(tmp_path):
    rows = [_lm_eval_sample(i, {"until": ["Question:"], "do_sample": False, "max_gen_toks": 64 * (i + 1)})
            for i in range(2)]
    (tmp_path / "my log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "my log.jsonl"}}, tmp_path)
    said = str(err.value)
    assert said.startswith(f"{tmp_path / 'my log.jsonl'}: line 1: arguments: an lm-evaluation-harness sample "), said
    prompts = _converted(tmp_path, said)
    if prompts is not None:
        assert [(p.name, p.text, p.max_tokens) for p in prompts] == [
            ("0", "Question: What is 0+0?\nAnswer:", 64), ("1", "Question: What is 1+1?\nAnswer:", 128)]


def test_an_lm_eval_sample_of_a_scoring_task_says_it_generates_nothing(tmp_path):
    said = _refusal(tmp_path, _lm_eval_sample(0, " 0"))
    assert "arguments: an lm-evaluation-harness sample of a loglikelihood task" in said, said
    prompts = _converted(tmp_path, said)
    if prompts is not None:
        assert [(p.text, p.max_tokens) for p in prompts] == [("Question: What is 0+0?\nAnswer:", 256)]
