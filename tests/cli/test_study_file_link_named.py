"""A study file given as a symlink to no regular file is named as given: the path the user typed,
and where it points.

Finds of a fuzz (qa138, hypothesis: the study file replaced by a link): `study create LINK` of a
link to nothing said ``error: /tmp/.../nowhere: file not found; check the path``, and of a link to
/dev/null ``error: /dev/null: not a regular file ...``: a path the user never gave, and not the
study file they did. A link to a real study file is read as before."""

from __future__ import annotations

import os

import pytest
from click.testing import CliRunner
from support.cli_inputs import ROOT

from tuner.cli import cli


@pytest.mark.parametrize("target, says", [
    ("nowhere/study.yaml", "a link to nowhere/study.yaml: file not found; check the path"),
    ("/dev/null", "a link to /dev/null: not a regular file (a device, pipe or socket); give a file"),
], ids=["a link to nothing", "a link to /dev/null"])
@pytest.mark.parametrize("command", [["study", "create"], ["launch", "--print", "--port", "4000"]],
                         ids=["create", "launch"])
def test_a_link_to_no_file_is_named_as_given(tmp_path, monkeypatch, target, says, command):
    monkeypatch.chdir(tmp_path)
    os.symlink(target, tmp_path / "study.yaml")
    r = CliRunner().invoke(cli, [*command, "study.yaml"])
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.output)
    assert r.stderr.splitlines() == [f"error: study.yaml: {says}"], r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study.yaml"]


def test_a_link_to_a_study_file_is_read(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "real.yaml").write_text((ROOT / "studies" / "sim-demo.yaml").read_text())
    os.symlink("real.yaml", tmp_path / "study.yaml")
    r = CliRunner().invoke(cli, ["study", "run", "--dry-run", "study.yaml"])
    assert r.exit_code == 0 and "# study sim-demo" in r.stdout, r.output
