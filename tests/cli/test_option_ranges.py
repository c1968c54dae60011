"""Numeric options outside their range are refused by the option parser: exit 2, one line naming the
flag and its range, before any study file is read (the file named here does not exist, so anything
past the option check would fail otherwise)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from tuner.cli import cli


@pytest.mark.parametrize("args, flag, says", [
    # a confirmation needs two rounds for any spread (tuner.engine.confirm)
    (["study", "confirm", "{f}", "--repeats", "1"], "--repeats", "2<=x<=1000"),
    (["study", "confirm", "{f}", "--near", "0.6"], "--near", "0<=x<=0.5"),
    (["study", "confirm", "{f}", "--near", "nan"], "--near", "not a finite number"),
    (["study", "confirm", "{f}", "--min-speedup-c32", "inf"], "--min-speedup-c32", "not a finite number"),
    (["study", "confirm", "{f}", "--max-candidates", "0"], "--max-candidates", "x>=1"),
    (["study", "run", "{f}", "--n-trials", "100001"], "--n-trials", "1<=x<=100000"),
    (["launch", "{f}", "--port", "65536"], "--port", "0<=x<=65535"),
    (["sim", "landscape", "--top", "0"], "--top", "x>=1"),
])
def test_an_option_out_of_its_range_is_one_line_and_exit_2(tmp_path, args, flag, says):
    missing = tmp_path / "no-such-study.yaml"
    r = CliRunner().invoke(cli, [a.format(f=missing) for a in args])
    lines = [ln for ln in r.output.splitlines() if ln.strip()]
    assert r.exit_code == 2 and len(lines) == 1, r.output
    assert lines[0].startswith("error: ") and f"'{flag}'" in lines[0] and says in lines[0], r.output
    assert list(tmp_path.iterdir()) == []
