"""`tuner study init --name NAME`: the starter's `name:` line reads back as the text NAME.

QA: PyYAML's dumper quotes only what YAML 1.1 reads as a number; the tuner reads YAML 1.2, where
`1e3`, `1e-3` and `0o17` are numbers too, so `tuner study init 1e3.yaml` wrote `name: 1e3` and
every command then refused the file it had just written ("name: ... got 1000.0").
"""

from __future__ import annotations

import pytest

from tuner.config.starters import STARTERS, starter_text
from tuner.config.study import load_study

#: valid study names that YAML 1.2 (the tuner's reader) or YAML 1.1 (PyYAML's dumper) reads as numbers
NAMES = ["1e3", "1e-3", "2E10", "0o17", "0x1F", "123", "007", "1_000", "1.5", "true", "null", "plain-name"]


@pytest.mark.parametrize("name", NAMES)
def test_the_written_name_reads_back_as_that_text(tmp_path, name):
    path = tmp_path / "s.yaml"
    path.write_text(starter_text("model", name), encoding="utf-8")
    assert load_study(path).name == name


def test_every_starter_quotes_a_name_yaml_1_2_reads_as_a_number(tmp_path):
    for backend in STARTERS:
        text = starter_text(backend, "1e3")
        assert "name: '1e3'" in text.splitlines(), backend
