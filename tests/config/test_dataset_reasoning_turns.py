"""A reasoning model's logged conversation: an assistant turn with its ``reasoning_content`` beside its
``content``, as Kimi K2.6 behind SGLang's ``--reasoning-parser`` answers and OpenAI-style logs keep it.
SGLang 0.5.23 takes the key on a turn (``openai/protocol.py`` ``ChatCompletionMessageGenericParam``) and
hands it to the chat template, which renders the past thinking, and its ``bench_serving --dataset-name
openai`` sends a row's turns as they are (``benchmark/datasets/openai_dataset.py``). QA: the row was
refused, ``messages[1].reasoning_content: unknown key; a turn is {role, content} (and optionally name)``,
no fix given. Now ``bench.api: chat`` sends it as it is, the raw-text APIs the contents alone, a
``null`` is no reasoning, and another role's or a non-text reasoning is refused with the fix."""

from __future__ import annotations

import json

import pytest
from support.chat_server import FakeChatSGLang

from tuner.bench import run_suite
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

THOUGHT = "The user wants a colour; red is the first that comes to mind."
TURNS = [{"role": "user", "content": "Name a colour."},
         {"role": "assistant", "content": "Red.", "reasoning_content": THOUGHT},
         {"role": "user", "content": "And a fruit?"}]


def suite_of(tmp_path, rows: list[dict]):
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return load_suite({"name": "t", "dataset": {"path": "d.jsonl"}, "single": {"lengths": [4], "repeats": 1},
                       "warmup": {"requests": 0}}, tmp_path)


def test_a_logged_reasoning_turn_is_sent_as_it_is_through_chat(tmp_path):
    suite = suite_of(tmp_path, [{"messages": TURNS, "max_tokens": 4},
                                {"messages": [{"role": "user", "content": "Hi there, friend."},
                                              {"role": "assistant", "content": "Hello!", "reasoning_content": None},
                                              {"role": "user", "content": "Bye now."}]}])
    with FakeChatSGLang(verify_every=0) as server:
        result = run_suite(server.url, suite, api="chat")
        bodies = list(server.bodies)
    assert result.n_failed == 0, [r.error for r in result.records]
    sent = {json.dumps(b["messages"]) for b in bodies}
    assert sent == {json.dumps(TURNS), json.dumps([{"role": "user", "content": "Hi there, friend."},
                                                   {"role": "assistant", "content": "Hello!"},
                                                   {"role": "user", "content": "Bye now."}])}
    # the raw-text APIs send the turns' contents, one paragraph each, as for every chat row
    (logged,) = [p for p in suite.prompts if p.max_tokens == 4]
    assert logged.text == "Name a colour.\n\nRed.\n\nAnd a fruit?"
    # stored with the study as it is sent: the suite read back from its dict is the same suite
    again = load_suite(suite.to_dict(), tmp_path)
    assert [p.chat_messages() for p in again.prompts] == [p.chat_messages() for p in suite.prompts]


@pytest.mark.parametrize("turn, where, said", [
    ({"role": "user", "content": "Name a colour.", "reasoning_content": THOUGHT}, "messages[0].reasoning_content",
     "only an assistant turn carries the model's reasoning, this turn's role is 'user': drop reasoning_content, "
     "or give the reasoning's turn as role assistant"),
    ({"role": "assistant", "content": "Red.", "reasoning_content": ["step 1"]}, "messages[0].reasoning_content",
     "must be text (the model's reasoning in that turn), got ['step 1']"),
])
def test_reasoning_that_no_model_turn_holds_is_refused_with_the_fix(tmp_path, turn, where, said):
    with pytest.raises(ConfigError) as err:
        suite_of(tmp_path, [{"messages": [turn, {"role": "user", "content": "Go on."}]}])
    assert str(err.value) == f"{tmp_path / 'd.jsonl'}: line 1: {where}: {said}", str(err.value)


def test_an_inline_suite_turn_holds_reasoning_only_as_the_assistant(tmp_path):
    prompt = {"name": "turns", "text": "Name a colour.", "messages": [
        {"role": "system", "content": "Be brief.", "reasoning_content": THOUGHT}, {"role": "user", "content": "Hi."}]}
    with pytest.raises(ConfigError, match="only an assistant turn carries the model's reasoning, this turn's "
                                          "role is 'system'"):
        load_suite({"name": "t", "prompts": [prompt], "single": {"lengths": [4]}}, tmp_path)
    prompt["messages"][0]["role"] = "assistant"
    suite = load_suite({"name": "t", "prompts": [prompt], "single": {"lengths": [4]}}, tmp_path)
    assert suite.prompts[0].chat_messages()[0] == {"role": "assistant", "content": "Be brief.",
                                                   "reasoning_content": THOUGHT}
