"""An empty ShareGPT file says it is empty (QA: a 0-byte `.json`, one of blank lines, or one holding a
byte-order mark alone was "line 1: not valid JSON (Expecting value)", or "line 3", with no fix)."""

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


@pytest.mark.parametrize("data", [b"", b"  \r\n\t\n", b"\xef\xbb\xbf"])
def test_an_empty_sharegpt_file_says_it_is_empty(tmp_path, data):
    (tmp_path / "d.json").write_bytes(data)
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": "d.json"}}, tmp_path)
    assert str(err.value) == (f"{tmp_path / 'd.json'}: is empty, no JSON list of conversations; give a file "
                              "with some")
