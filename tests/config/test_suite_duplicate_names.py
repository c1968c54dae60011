"""A suite with two prompts of one name is refused naming the key, both prompts and the fix (QA:
``prompt names must be unique``, naming neither); the name keys a prompt's records, tables and
lossless check."""

from __future__ import annotations

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def test_a_prompt_name_given_twice_names_both_prompts(tmp_path):
    suite = tmp_path / "dup.yaml"
    suite.write_text("name: dup\nprompts: [{name: a, text: one}, {name: b, text: two}, {name: a, text: three}]\n"
                     "single: {lengths: [8]}\n")
    with pytest.raises(ConfigError) as info:
        load_suite(str(suite))
    assert str(info.value).endswith("prompts[2].name 'a' is prompts[0]'s name too: prompt names must be unique; "
                                    "rename one"), str(info.value)
    assert "dup.yaml" in str(info.value)
