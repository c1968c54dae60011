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


def test_a_profile_name_with_a_newline_is_refused_naming_the_profile(tmp_path):
    # QA (qa66): a profile named "dense\nx" split the benchmark's table headings; once landscape
    # tables refused such a name, search_efficiency.py --profiles wrote a cache table and then
    # refused it, naming the cache file. The profile file itself is refused, naming it.
    import yaml

    from tuner.sim.profile import PROFILES_DIR

    data = yaml.safe_load((PROFILES_DIR / "dense-27b-tp1.yaml").read_text())
    data["name"] = "dense\nx"
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(ConfigError) as err:
        load_profile(path)
    text = str(err.value)
    assert text.startswith(f"{path}: name") and "control character '\\n'" in text and "\n" not in text, text
    data["name"] = " dense-x\n"  # surrounding whitespace, as before, is no problem
    path.write_text(yaml.safe_dump(data))
    assert load_profile(path).name.strip() == "dense-x"


def test_a_device_given_as_a_profile_is_no_regular_file():
    """QA (qa80): ``tuner sim serve --sim-profile /dev/null`` said "file not found" (it exists)."""
    from tuner.sim.profile import profile_path

    with pytest.raises(ConfigError, match="not a regular file"):
        profile_path("/dev/null")
