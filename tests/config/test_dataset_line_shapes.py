"""A JSON line of the wrong shape is refused with its fix (QA: a row ending in a comma was "line 1:
not valid JSON (Extra data)"; a line holding a JSON list, or a bare text, "expected a JSON object
with prompt or messages", the fix left to guess)."""

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


@pytest.mark.parametrize("line, says", [
    ('{"prompt": "b"},', "not valid JSON (Extra data); it ends in a comma: JSON lines hold one object each, "
                         "nothing between them"),
    ('[{"prompt": "b"}]', "expected a JSON object with prompt or messages; got a JSON list: give one request "
                          "object a line"),
    ('"b"', 'expected a JSON object with prompt or messages; got a text: write it as {"prompt": TEXT}'),
])
def test_a_line_of_the_wrong_shape_says_the_fix(tmp_path, line, says):
    (tmp_path / "d.jsonl").write_text('{"prompt": "a"}\n' + line + "\n")
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "d.jsonl"}}, tmp_path)
    assert str(err.value) == f"{tmp_path / 'd.jsonl'}: line 2: {says}"
