"""A ``dataset.path`` typed with decomposed accents (NFD: copied from a macOS terminal or Finder) for a
file named here with composed ones (NFC) is named as such, not as "a file named on macOS" (its name is
the composed one): tuner/config/dataset.py, ``_found_instead``. QA (qa152): the hint said the file on
disk was "named on macOS: Unicode NFD", the reverse of the case. The mv line it gives still makes the
path read."""

from __future__ import annotations

import shlex
import unicodedata

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError


def test_a_decomposed_path_for_a_composed_file_is_said_so(tmp_path):
    on_disk = unicodedata.normalize("NFC", "dätä.jsonl")
    typed = unicodedata.normalize("NFD", "dätä.jsonl")
    assert on_disk != typed
    (tmp_path / on_disk).write_text('{"prompt": "hello there"}\n')
    with pytest.raises(ConfigError) as err:
        load_suite({"name": "t", "dataset": {"path": typed}}, tmp_path)
    command = f"mv -- {shlex.quote(str(tmp_path / on_disk))} {shlex.quote(str(tmp_path / typed))}"
    assert str(err.value).endswith(
        "; 'd\\xe4t\\xe4.jsonl' is there, the same name with its accents written as other code points "
        "(the path is written decomposed, Unicode NFD, as macOS writes names, the file's name composed, "
        f"NFC): rename the file ({command})")
    assert "named on macOS" not in str(err.value)
    (tmp_path / on_disk).rename(tmp_path / typed)
    assert [p.text for p in load_suite({"name": "t", "dataset": {"path": typed}}, tmp_path).prompts] == \
        ["hello there"]
