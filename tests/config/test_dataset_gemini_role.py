"""A JSONL turn of role ``model``, Gemini's name for the assistant's turn (a Gemini API log converted
to ``messages``), is refused with the role to write (QA: refused with the list of roles alone)."""

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


@pytest.mark.parametrize("role", ["model", "Model"])
def test_gemini_model_role_says_assistant(tmp_path, role):
    row = {"messages": [{"role": "user", "content": "hi there"}, {"role": role, "content": "Hello!"},
                        {"role": "user", "content": "tell me a joke"}]}
    (tmp_path / "d.jsonl").write_text(json.dumps(row) + "\n")
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "d.jsonl"}}, tmp_path)
    assert str(err.value) == (f"{tmp_path / 'd.jsonl'}: line 1: messages[1].role: expected one of system, user, "
                              f"assistant, tool, developer, got {role!r} (Gemini's name for 'assistant'); write it "
                              "as 'assistant'")
