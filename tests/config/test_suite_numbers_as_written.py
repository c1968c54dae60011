"""A number where a suite wants text (its ``name``, a prompt's ``name`` or ``text``) is said as the
file wrote it, in a suite file and in a study's inline suite, as the study file's own keys are.

QA: ``name: 1e3`` in a suite said ``YAML reads the unquoted 1000.0 as a number: quote it ('1000.0')``:
quoting as told gave a name nobody wrote. The suite's reader kept no written texts
(tuner/config/suite.py ``load_suite``; tuner/config/yamlfile.py ``written_numbers``).
"""

from pathlib import Path

import pytest

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

ROOT = Path(__file__).resolve().parents[2]
SUITE = (ROOT / "tuner" / "config" / "suites" / "quick.yaml").read_text()


@pytest.mark.parametrize("key, old, written, number", [
    ("name", "name: quick", "name: 1e3", "1000.0"),
    ("prompts[0].name", "name: fib,", "name: 0x1F,", "31"),
    ("prompts[1].text", '"Return a JSON object describing three fictional employees with name, age, department '
                        'and skills."', "1.50", "1.5"),
])
def test_a_suite_file_says_the_number_as_written(tmp_path, key, old, written, number):
    assert old in SUITE
    path = tmp_path / "s.yaml"
    path.write_text(SUITE.replace(old, written, 1))
    with pytest.raises(ConfigError) as err:
        load_suite(path)
    text = written.split(": ")[-1].rstrip(",")
    assert err.value.key == key
    assert f"YAML reads the unquoted {text} as a number: quote it ('{text}')" in err.value.message
    assert f"'{number}'" not in err.value.message


def test_an_inline_suite_says_it_as_written_naming_the_study_file(tmp_path):
    study = (ROOT / "studies" / "model-demo.yaml").read_text()
    inline = "".join(f"    {line}\n" for line in SUITE.replace("name: quick", "name: 1e3", 1).splitlines())
    path = tmp_path / "t.yaml"
    assert "bench:\n  suite: seed\n" in study
    path.write_text(study.replace("bench:\n  suite: seed\n", "bench:\n  suite:\n" + inline, 1))
    with pytest.raises(ConfigError) as err:
        load_study(path)
    assert err.value.source == str(path) and err.value.key == "bench.suite.name"
    assert "YAML reads the unquoted 1e3 as a number: quote it ('1e3')" in err.value.message


def test_the_quoted_name_loads_as_written(tmp_path):
    path = tmp_path / "s.yaml"
    path.write_text(SUITE.replace("name: quick", "name: '1e3'", 1))
    assert load_suite(path).name == "1e3"
