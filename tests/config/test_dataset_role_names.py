"""A JSONL turn whose role is another layout's name for an OpenAI role is refused with the role to
write (QA: "Human"/"gpt" in a file converted from ShareGPT, "USER", and OpenAI's retired
"function" were refused with the list of roles alone, the fix left to guess)."""

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


@pytest.mark.parametrize("role, fix", [
    ("Human", " (ShareGPT's name for 'user'); write it as 'user'"),
    ("gpt", " (ShareGPT's name for 'assistant'); write it as 'assistant'"),
    ("USER", "; roles are lower case: write it as 'user'"),
    ("Assistant", "; roles are lower case: write it as 'assistant'"),
    ("function", " (OpenAI's retired role for a function's result, now 'tool'); write it as 'tool'"),
])
def test_a_role_of_another_name_is_refused_with_the_role_to_write(tmp_path, role, fix):
    rows = [{"prompt": "a first request"},
            {"messages": [{"role": "system", "content": "be brief"}, {"role": role, "content": "hello"}]}]
    (tmp_path / "d.jsonl").write_text("\n".join(map(json.dumps, rows)))
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "d.jsonl"}}, tmp_path)
    text = str(err.value)
    assert text.startswith(f"{tmp_path / 'd.jsonl'}: line 2: messages[1].role: expected one of "), text
    assert text.endswith(f"got {role!r}{fix}"), text
    assert "\n" not in text


def test_a_role_of_no_other_name_keeps_the_list_alone(tmp_path):
    (tmp_path / "d.jsonl").write_text(json.dumps({"messages": [{"role": "narrator", "content": "hi"}]}))
    with pytest.raises(ConfigError, match=r"developer, got 'narrator'$"):
        load_suite({"name": "t", "dataset": {"path": "d.jsonl"}}, tmp_path)
