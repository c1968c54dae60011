"""A YAML error on a line holding a Unicode space YAML does not take as one (a no-break space after a
colon, pasted from a web page) says which character is there (tuner/config/yamlfile.py ``_odd_space``).

QA: ``tp_size:\\u00a08`` was ``line 8: not valid YAML (could not find expected ':')``, about a line
that reads ``tp_size: 8`` on screen, the key on the line before.
"""

import pytest

from tuner.config.yamlfile import ConfigError, read_yaml

STUDY = "name: x\nserver:\n  backend: sim\n  tp_size: 8\n  stop_grace_s: 10\nbudget: {n_trials: 2}\n"


@pytest.mark.parametrize("old, new, char", [
    ("tp_size: 8", "tp_size:\u00a08", "U+00A0 (no-break space)"),
    ("  tp_size: 8", "\u00a0 tp_size: 8", "U+00A0 (no-break space)"),
    ("tp_size: 8", "tp_size:\u30008", "U+3000 (ideographic space)"),
    ("  tp_size: 8", "\u202f tp_size: 8", "U+202F (narrow no-break space)"),
])
def test_the_odd_space_is_named_with_its_line(tmp_path, old, new, char):
    path = tmp_path / "x.yaml"
    path.write_text(STUDY.replace(old, new), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        read_yaml(path)
    assert err.value.message.startswith("not valid YAML (")
    assert err.value.message.endswith(f"; line 4 holds {char}, which YAML does not read as a space: type a "
                                      "plain space there")
    assert "\n" not in str(err.value)


def test_other_bad_yaml_gets_no_such_hint(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text(STUDY.replace("  tp_size: 8", "  tp_size: [8"), encoding="utf-8")
    with pytest.raises(ConfigError) as err:
        read_yaml(path)
    assert "space" not in err.value.message
