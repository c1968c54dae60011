"""A second YAML document (``---`` after the file's mapping: two files pasted together) is said with
its line and the fix (tuner/config/yamlfile.py ``read_yaml``); a leading ``---`` stays fine.

QA (qa228): the line was ``line 23: not valid YAML (but found another document)``, PyYAML's words,
naming neither the ``---`` nor what to do."""

from __future__ import annotations

from click.testing import CliRunner
from support.demo_study import demo_study

from tuner.cli import cli


def test_a_second_document_is_said_with_its_line(tmp_path):
    study = demo_study(tmp_path, "dc")
    text = study.read_text()
    study.write_text(text + "---\nname: other\n")
    line = len(text.splitlines()) + 1
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1, r.output
    assert f"dc.yaml: line {line}: not valid YAML (but found another document); line {line} starts a second " \
           "YAML document ('---'), and a tuner file holds one mapping" in lines[0], r.output
    assert not (tmp_path / "dc.db").exists()


def test_a_leading_marker_is_one_document(tmp_path):
    study = demo_study(tmp_path, "dc")
    study.write_text("---\n" + study.read_text() + "...\n")
    r = CliRunner().invoke(cli, ["study", "create", str(study)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
