"""`tuner sim landscape --suite FILE` holds the file to the suite schema every other reader applies
(`tuner bench --suite`, a study's bench.suite): one line naming the file and the key, exit 2, no
table written.

Finds of a fuzz (qa138, hypothesis) changing one value of a shipped suite: the model's own reader
(tuner.sim.landscape.load_suite_inputs) took only the keys it needs, so ``single`` or ``prompts`` of
another type ended in a traceback (AttributeError, TypeError), and a length given as ``true`` or an
unknown key computed a landscape, and wrote its --table, exit 0, for a suite no study can measure."""

from __future__ import annotations

import math

import pytest
import yaml
from click.testing import CliRunner

from tuner.cli import cli
from tuner.config.suite import shipped_suite_file

QUICK = yaml.safe_load(shipped_suite_file("quick").read_text())

CASES = [
    ("single", "\u2028", "single: input should be a valid dictionary"),
    ("prompts", -math.inf, "prompts: input should be a valid list"),
    ("single", {"lengths": [True], "repeats": 1}, "single.lengths[0]: input should be a valid integer, got True"),
    ("zz_unknown", 1, "zz_unknown: unknown key; expected one of: name, prompts, "),
]


@pytest.mark.parametrize("key, value, says", CASES, ids=["single as text", "prompts -inf", "a length true",
                                                          "an unknown key"])
def test_a_suite_file_no_study_accepts_is_refused_naming_its_key(tmp_path, monkeypatch, key, value, says):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump({**QUICK, key: value}, allow_unicode=True))
    r = CliRunner().invoke(cli, ["sim", "landscape", "--suite", "suite.yaml", "--concurrency", "1", "--top", "1",
                                 "--table", "t.json"])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.output)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: suite.yaml: {says}"), r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["suite.yaml"]  # no table


def test_the_unchanged_suite_is_computed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(QUICK))
    r = CliRunner().invoke(cli, ["sim", "landscape", "--suite", "suite.yaml", "--concurrency", "1", "--top", "1",
                                 "--table", "t.json"])
    assert r.exit_code == 0 and "valid effective settings" in r.stdout, r.output
    assert (tmp_path / "t.json").is_file()
