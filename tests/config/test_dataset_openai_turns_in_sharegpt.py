"""A ShareGPT list whose turns are OpenAI's ``{role, content}`` (LMSYS-Chat's ``conversation``, many
exports' ``conversations``) is refused at its first such turn with the fix: the ``custom`` layout,
which reads such turns as SGLang 0.5.23's ``custom.py`` does, one conversation a line (QA:
"[0].conversation[0]: expected {from, value} with a text value", the fix left to guess)."""

import json
import shlex

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

ROWS = [{"conversation_id": "c1", "model": "vicuna-13b", "conversation": [
    {"role": "user", "content": "Tell me a story about a dragon."},
    {"role": "assistant", "content": "Once upon a time a dragon kept a library."}]}]


def test_openai_turns_in_a_sharegpt_list_say_how_to_read_them(tmp_path):
    data, lines = tmp_path / "lmsys chat.json", tmp_path / "lmsys chat.lines.jsonl"
    data.write_text(json.dumps(ROWS, indent=2))
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": data.name}}, tmp_path)
    command = f"jq -c '.[]' {shlex.quote(str(data))} > {shlex.quote(str(lines))}"
    assert str(err.value) == (f"{data}: [0].conversation[0]: expected {{from, value}} with a text value; got {{role, "
                              "content}, OpenAI's turns: the custom layout reads them, one conversation a line "
                              f"({command} writes them so; give that file as dataset.path with format: custom)")
    assert shlex.split(command)[3:] == [str(data), ">", str(lines)]
    # what the command writes reads as the conversation: its first turn the prompt, its reply's length the output
    lines.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    suite = load_suite({"name": "t", "dataset": {"path": lines.name, "format": "custom"}}, tmp_path)
    assert [(p.text, p.max_tokens) for p in suite.prompts] == [("Tell me a story about a dragon.", 10)]


def test_a_turn_of_another_shape_is_refused_as_before(tmp_path):
    (tmp_path / "d.json").write_text(json.dumps([{"conversations": [{"from": "human", "text": "hello there"},
                                                                    {"from": "gpt", "value": "general kenobi"}]}]))
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "d.json"}}, tmp_path)
    assert str(err.value) == f"{tmp_path / 'd.json'}: [0].conversations[0]: expected {{from, value}} with a text value"
