"""A mapping key with an explicit tag that is not text (``!!binary``, ``!!timestamp``, a custom ``!tag``)
is refused naming its line and the tag, as a key YAML reads as a number is
(tuner/config/yamlfile.py ``_check_nodes``).

QA: ``server.args: {!!timestamp 2026-12-07: 1}`` said ``server.args.datetime.date(2026, 12, 7).[key]:
input should be a valid string``, and a ``!!binary`` key ``server.args.b'hi'.[key]``: Python's
reprs as a key path, no line.
"""

import pytest

from tuner.config.yamlfile import ConfigError, read_yaml


@pytest.mark.parametrize("key, value, tag", [("!!binary aGk=", "aGk=", "!!binary"),
                                             ("!!timestamp 2026-12-07", "2026-12-07", "!!timestamp"),
                                             ("!custom k", "k", "!custom")])
def test_a_tagged_key_is_refused_at_its_line(tmp_path, key, value, tag):
    path = tmp_path / "x.yaml"
    path.write_text(f"name: x\nserver:\n  args:\n    ? {key}\n    : 1\n")
    with pytest.raises(ConfigError) as err:
        read_yaml(path)
    assert err.value.key == "server.args"
    assert err.value.message == f"line 4: the key {value} is tagged {tag}, and every key is text: remove the tag"


def test_a_key_tagged_as_text_is_text(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("args: {!!str 1: x, \"2\": y, z: 3}\n")
    assert read_yaml(path) == {"args": {"1": "x", "2": "y", "z": 3}}
