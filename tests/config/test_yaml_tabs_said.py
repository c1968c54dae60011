"""A tab where YAML takes none (an indent, after a colon, after a list's dash) is said with its line and
the fix, in a study file and a search space alike (tuner/config/yamlfile.py ``read_yaml``).

QA (qa228): ``\ttp_size: 8`` or ``tp_size:\t8`` (a tab typed or pasted from a Makefile, invisible on
screen) was ``line 10: not valid YAML (found character '\\t' that cannot start any token)``, naming
neither the tab nor what to type instead. SGLang's ``--config`` loader (PyYAML's scanner too) refuses it
alike, so the fix is spaces, not another reader."""

from __future__ import annotations

import pytest
import yaml
from click.testing import CliRunner
from support.demo_study import ROOT, demo_study

from tuner.cli import cli


@pytest.mark.parametrize("old, new", [("  tp_size: 8", "\ttp_size: 8"), ("tp_size: 8", "tp_size:\t8")])
def test_a_tab_in_the_study_file_is_said_with_its_line(tmp_path, old, new):
    study = demo_study(tmp_path, "tab", **{"server.tp_size": 8})
    text = study.read_text()
    assert old in text
    study.write_text(text.replace(old, new, 1))
    line = next(n for n, row in enumerate(study.read_text().splitlines(), 1) if "\t" in row)
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert f"tab.yaml: line {line}: not valid YAML" in lines[0], r.output
    assert f"line {line} holds a tab, which YAML does not take there: indent and separate with spaces" in lines[0]
    assert not (tmp_path / "tab.db").exists()


def test_a_tab_in_a_search_space_is_said_too(tmp_path):
    space = tmp_path / "space.yaml"
    text = yaml.safe_dump(yaml.safe_load((ROOT / "search_spaces" / "eagle3.yaml").read_text()))
    line, first = next((n, row) for n, row in enumerate(text.splitlines(), 1) if row.startswith("  "))
    space.write_text(text.replace(first, "\t" + first.lstrip(), 1))
    r = CliRunner().invoke(cli, ["space", "check", str(space), "--num-steps", "3", "--topk", "1",
                                 "--draft-tokens", "4"], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert f"space.yaml: line {line}: not valid YAML" in r.output, r.output
    assert f"line {line} holds a tab" in r.output, r.output


def test_a_tab_inside_quoted_text_is_text(tmp_path):
    # YAML takes a tab inside a quoted scalar: no hint, no error
    study = demo_study(tmp_path, "tab", **{"server.env": {"A": "x\ty"}})
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
