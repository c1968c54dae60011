"""`tuner.sim.landscape.load_suite_inputs` from Python holds a suite to the suite schema, as the CLI
does (QA fuzz, qa138: the CLI was guarded, the function still took `lengths: [true]` or crashed on
`single: x`)."""

import pytest

from tuner.config.yamlfile import ConfigError
from tuner.sim.landscape import load_suite_inputs

SUITE = "name: s\nprompts:\n  - {name: a, text: hello}\n"


@pytest.mark.parametrize("tail, key", [
    ("single: {lengths: [true]}\n", "single.lengths[0]"),
    ("single: x\n", "single"),
    ("temperature: hot\n", "temperature"),
])
def test_a_suite_no_study_could_measure_is_refused_naming_its_key(tmp_path, tail, key):
    path = tmp_path / "s.yaml"
    path.write_text(SUITE + tail)
    with pytest.raises(ConfigError) as e:
        load_suite_inputs(path)
    assert str(path) in str(e.value) and key in str(e.value), str(e.value)


def test_a_good_suite_gives_its_prompts(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SUITE + "single: {lengths: [64]}\nsweep: {concurrencies: [1, 32], max_tokens: 64}\n")
    got = load_suite_inputs(path)
    assert got.prompts == ("hello",) and got.single_lengths == (64,) and got.sweep_tokens == 64
