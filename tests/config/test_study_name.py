"""A study name that is not one (a slash, a space, unicode, a leading dash or dot, empty) is one line
naming the study file and `name`, saying what a name is made of, exit 2, nothing written.

QA: the line was pydantic's `name: string should match pattern '^[A-Za-z0-9][A-Za-z0-9._-]*$'`, a
regular expression instead of the fix.
"""

import pytest
from click.testing import CliRunner

from support.faults import ROOT
from tuner.cli import cli

STUDY = """
name: {name}
search_space: {space}
storage: sqlite:///n.db
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  model: {{profile: k2.6-tp8-pcie}}
bench: {{suite: quick}}
"""


@pytest.mark.parametrize("name", ['"a/b"', '""', '" "', '"ünï"', '"a b"', '"-x"', '"../up"', '"x:y"', '"."'])
def test_a_name_that_is_not_one_says_what_a_name_is(name, tmp_path):
    study = tmp_path / "n.yaml"
    study.write_text(STUDY.format(name=name, space=ROOT / "search_spaces" / "eagle3.yaml"))
    r = CliRunner().invoke(cli, ["study", "create", str(study)])
    assert r.exit_code == 2, r.output
    line = r.output.strip()
    assert "\n" not in line and line.startswith(f"error: {study}: name: "), line
    assert "letters, digits and ._-" in line and "pattern" not in line, line
    assert sorted(p.name for p in tmp_path.iterdir()) == ["n.yaml"]
