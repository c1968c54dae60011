"""`tuner study export -o FILE --adaptive-out LOOP`, a symlink loop as the policy file, is one line
naming --adaptive-out, exit 2, nothing written.

A find of a fuzz (qa138, hypothesis, odd output paths): the check that -o and --adaptive-out are
two files compared them with ``Path.resolve()``, which raises RuntimeError on a symlink loop on
Python 3.10-3.12: a traceback, before the output checks that name a loop."""

from __future__ import annotations

import os

from click.testing import CliRunner
from support.cli_inputs import ROOT

from tuner.cli import cli


def test_a_policy_file_that_is_a_symlink_loop_is_named(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    (tmp_path / "demo.yaml").write_text((ROOT / "studies" / "model-demo.yaml").read_text())
    os.symlink("loop", tmp_path / "loop")
    before = sorted(p.name for p in tmp_path.iterdir())
    r = CliRunner().invoke(cli, ["study", "export", "demo.yaml", "--pick", "knee", "-o", "best.yaml",
                                 "--adaptive-out", "loop"])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.output)
    assert r.stderr.splitlines() == ["error: --adaptive-out: loop: is no usable path (a symlink loop); give a "
                                     "shorter or other path"], r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_the_same_file_twice_is_still_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    (tmp_path / "demo.yaml").write_text((ROOT / "studies" / "model-demo.yaml").read_text())
    os.symlink("best.yaml", tmp_path / "link.yaml")
    r = CliRunner().invoke(cli, ["study", "export", "demo.yaml", "--pick", "knee", "-o", "best.yaml",
                                 "--adaptive-out", "link.yaml"])
    assert r.exit_code == 2 and r.stderr.startswith("error: --adaptive-out: link.yaml: is the -o file too"), r.output
