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
