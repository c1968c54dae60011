"""An empty file flag of `tuner bench` and `tuner sim landscape` (a script's unset ``"$OUT"``) is one
line naming the flag, ``is empty``, exit 2, nothing written.

Finds of a fuzz (qa138, hypothesis, odd flag values): `sim landscape --table ''` computed the
landscape, wrote no table, exit 0 (the flag read as left out); `bench --json ''` and `--compare ''`
said ``.: is a folder`` (``Path('')``, the working folder, which nobody gave); `bench --suite ''`
said ``<suite>: empty``, naming no flag."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tuner.cli import cli

CASES = [
    (["sim", "landscape", "--concurrency", "1", "--top", "1", "--table", ""],
     "error: --table: is empty: give a file name, or leave --table out"),
    (["bench", "--url", "http://127.0.0.1:9", "--suite", "quick", "--json", ""],
     "error: --json: is empty: give a file name, or leave --json out"),
    (["bench", "--url", "http://127.0.0.1:9", "--suite", "quick", "--compare", ""],
     "error: --compare: is empty: give a result saved with --json, or leave --compare out"),
    (["bench", "--url", "http://127.0.0.1:9", "--suite", ""],
     "error: --suite: is empty: give a shipped suite's name or a suite YAML file, or leave --suite out"),
]


@pytest.mark.parametrize("args, line", CASES, ids=["landscape --table", "bench --json", "bench --compare",
                                                    "bench --suite"])
def test_an_empty_file_flag_is_named_and_refused(tmp_path, monkeypatch, args, line):
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.output)
    assert r.stderr.splitlines() == [line], r.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_json_flag_still_takes_a_file(tmp_path, monkeypatch):
    # no server on port 9: the suite and the output were taken, the run says the server is not there
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(cli, ["bench", "--url", "http://127.0.0.1:9", "--suite", "quick", "--json", "out.json"])
    assert r.exit_code == 1 and r.stderr.startswith("error: no server answering at http://127.0.0.1:9"), r.output
