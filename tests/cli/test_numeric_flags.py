"""Numeric flags (qa80): ASCII digits only, and the speculative flags within a search space's caps; each
bad value is one line naming the flag, exit 2, nothing written."""

from __future__ import annotations

import pytest
from support.cli_inputs import accepted, refused, study_with


@pytest.mark.parametrize("args, says", [
    (["space", "check", "eagle3", "--num-steps", "99999999999999999999"],
     "'--num-steps' / '--speculative-num-steps': 99999999999999999999 is not in the range x<=64"),
    (["space", "check", "eagle3", "--draft-tokens", "1025"], "'--draft-tokens' / '--speculative-num-draft-tokens': 1025 is not in the range x<=1024"),
    (["launch", "x.yaml", "--topk", "65"], "'--topk' / '--speculative-eagle-topk': 65 is not in the range x<=64"),
    # held out (qa80): a billion rounds were started (two billion launches, a run of years)
    (["study", "confirm", "x.yaml", "--repeats", "1000000000"], "'--repeats': 1000000000 is not in the range "
                                                                 "2<=x<=1000"),
], ids=["space check steps 1e20", "space check draft 1025", "launch topk 65", "confirm repeats 1e9"])
def test_a_flag_past_its_bound_is_refused(tmp_path, monkeypatch, args, says):
    # QA: `space check --num-steps 99999999999999999999` said "valid"; the speculative flags are held to a
    # space's caps, confirm's rounds to a suite's repeats
    monkeypatch.chdir(tmp_path)
    assert says in refused(tmp_path, args)
    out = accepted(["space", "check", "eagle3", "--num-steps", "64", "--topk", "1"])
    assert out.startswith("valid"), out


@pytest.mark.parametrize("args", [
    ["sim", "landscape", "--concurrency", "1,１６"],
    ["sim", "landscape", "--top", "٣"],
    ["space", "check", "eagle3", "--num-steps", "３"],
    ["study", "run", "--n-trials", "１０", "x.yaml"],
    ["study", "pareto", "x", "--min-speedup-c32", "１.5"],
    ["study", "confirm", "x", "--repeats", "３"],
    ["launch", "x.yaml", "--port", "８０"],
], ids=["concurrency", "top", "num-steps", "n-trials", "min-speedup-c32", "repeats", "port"])
def test_every_numeric_flag_takes_ascii_digits_only(tmp_path, monkeypatch, args):
    # QA: int('１６') is 16: `--concurrency １６` ran at 16; decided: ASCII only, as --pick TRIAL
    monkeypatch.chdir(tmp_path)
    line = refused(tmp_path, args)
    value = next(a for a in args if not a.isascii() and any(c.isdecimal() for c in a))
    flag = args[args.index(value) - 1]
    named = f"'{flag}' / '--speculative-num-steps'" if flag == "--num-steps" else f"'{flag}'"  # SGLang's name too
    shown = value.split(",")[-1]
    ascii_text = "".join(str(int(c)) if c.isdecimal() else c for c in shown)
    assert line == (f"error: Invalid value for {named}: {shown!r}: write the "
                    f"{'number' if '.' in shown else 'integer'} in ASCII digits, as {ascii_text}"), line


def test_a_duration_in_other_digits_is_refused(tmp_path):
    # held out (qa80): "８h" was a budget of 8 hours (Python's \\d and float() read other scripts' digits)
    line = refused(tmp_path, ["study", "create", str(study_with(tmp_path, "budget.timeout", "８h"))])
    assert line.endswith("budget.timeout: expected a duration with a unit on every number, such as 8h, 45m, "
                         "90s or 1h30m, got '８h' (write the digits in ASCII: 8h)"), line
    assert refused(tmp_path, ["study", "run", "--dry-run", "--timeout", "１h30m", str(tmp_path / "study.yaml")]) == (
        "error: --timeout: expected a duration with a unit on every number, such as 8h, 45m, 90s or 1h30m, got "
        "'１h30m' (write the digits in ASCII: 1h30m)")
    accepted(["study", "create", str(study_with(tmp_path, "budget.timeout", "8h"))])
