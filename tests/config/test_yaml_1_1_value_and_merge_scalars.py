"""A plain ``=`` or ``<<`` as a value is text, as YAML 1.2 reads it (tuner/config/yamlfile.py): PyYAML's
YAML 1.1 resolvers tag them as the "value" and "merge" keys, for which its safe loader has no
constructor. ``<<`` as a key is still refused (tests/config/test_yaml_merge_keys.py).

QA: a prompt's ``text: =`` (and ``served_model_name: <<``) was ``not valid YAML (could not determine a
constructor for the tag 'tag:yaml.org,2002:value')``, a line about PyYAML's internals, for text.
"""

import pytest

from tuner.config.yamlfile import ConfigError, read_yaml


@pytest.mark.parametrize("plain", ["=", "<<"])
def test_a_plain_value_or_merge_sign_is_text(tmp_path, plain):
    path = tmp_path / "x.yaml"
    path.write_text(f"prompts:\n  - {{name: a, text: {plain}}}\nargs:\n  served_model_name: {plain}\n"
                    f"list: [{plain}, x]\n")
    assert read_yaml(path) == {"prompts": [{"name": "a", "text": plain}], "args": {"served_model_name": plain},
                               "list": [plain, "x"]}


def test_a_merge_key_is_still_refused(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("server:\n  <<: {tp_size: 4}\n  tp_size: 8\n")
    with pytest.raises(ConfigError, match=r"line 2: merge keys \(<<\) are not supported"):
        read_yaml(path)
