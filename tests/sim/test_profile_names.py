"""A mistyped simulator profile name names the closest shipped one."""

import pytest

from tuner.config.yamlfile import ConfigError
from tuner.sim.profile import load_profile


def test_a_mistyped_profile_name_says_what_was_meant():
    with pytest.raises(ConfigError, match=r"k2\.6-tp8-pci: no such simulator profile \(did you mean 'k2\.6-tp8-pcie'\?\)"):
        load_profile("k2.6-tp8-pci")
    with pytest.raises(ConfigError) as exc:
        load_profile("zzzz")
    assert "did you mean" not in str(exc.value) and "shipped: dense-27b-tp1" in str(exc.value)


def test_a_folder_given_as_a_profile_says_it_is_a_folder(tmp_path):
    # QA: search_efficiency.py --profiles some.yaml, a folder, said "file not found; check the path":
    # the path is there; what is wrong is that it is no file.
    folder = tmp_path / "prof.yaml"
    folder.mkdir()
    with pytest.raises(ConfigError, match=r"prof\.yaml: is a folder; give a file"):
        load_profile(folder)
    with pytest.raises(ConfigError, match=r"file not found; check the path"):
        load_profile(tmp_path / "missing.yaml")
