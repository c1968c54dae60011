"""A value where a section (a mapping) goes, ``bench: quick`` or ``sampler: tpe``, says to write a
mapping and the keys it takes (tuner/config/yamlfile.py ``validation_error``), after the words the
line already had (tests/cli/test_empty_key_message.py).

QA: ``bench: quick`` said only ``bench: input should be a valid dictionary, got 'quick'``: no word
of the ``suite:`` key the user meant, nor of what a "dictionary" is in a YAML file.
"""

from pathlib import Path

import pytest

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

ROOT = Path(__file__).resolve().parents[2]
STUDY = (ROOT / "studies" / "model-demo.yaml").read_text()
FIX = "give a mapping, key: value lines indented under it"


@pytest.mark.parametrize("old, new, key, got, keys", [
    ("bench:\n  suite: seed\n", "bench: quick\n", "bench", "'quick'", "suite, api, stream, lossless, trial_timeout"),
    ("budget:\n  n_trials: 16\n", "budget: 16\n", "budget", "16", "n_trials, timeout, prune"),
    ("budget:\n", "sampler: tpe\nbudget:\n", "sampler", "'tpe'", "name, seed, options"),
])
def test_a_section_given_a_value_names_its_keys(tmp_path, old, new, key, got, keys):
    assert old in STUDY
    path = tmp_path / "s.yaml"
    path.write_text(STUDY.replace(old, new, 1))
    with pytest.raises(ConfigError) as err:
        load_study(path)
    assert err.value.key == key
    assert err.value.message == f"input should be a valid dictionary, got {got}; {FIX} (its keys: {keys})"


def test_a_mapping_of_any_keys_given_a_value_says_to_write_one(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(STUDY.replace("  tp_size: 8\n", "  tp_size: 8\n  args: --trust-remote-code\n", 1))
    with pytest.raises(ConfigError) as err:
        load_study(path)
    assert err.value.key == "server.args" and err.value.message.endswith(f"'--trust-remote-code'; {FIX}")


def test_a_suite_file_section_too(tmp_path):
    text = (ROOT / "tuner" / "config" / "suites" / "quick.yaml").read_text()
    old = "single:\n  lengths: [128, 256]\n  repeats: 1\n"
    assert old in text
    path = tmp_path / "suite.yaml"
    path.write_text(text.replace(old, "single: 128\n"))
    with pytest.raises(ConfigError) as err:
        load_suite(path)
    assert err.value.key == "single" and f"got 128; {FIX} (its keys: " in err.value.message
