"""`tuner bench --compare FILE` refuses a file `tuner bench --json` cannot have saved: one line naming
--compare and the file, exit 2, before any request.

Each case is a find of a fuzz (qa138, hypothesis) that changed one value of a result the real
simulator measured: before, a record list that was none, a time as text, a resolved_spec that was
no mapping or JSON nested thousands deep ended in a traceback; a NaN, a negative or a 10^30 token
count, or a request that ended before it started, was taken as the baseline and every speedup
printed from it (``nanx``, ``0.00x``), exit 0."""

from __future__ import annotations

import json
import math

import pytest
from click.testing import CliRunner
from support.cli_inputs import SUITE
from support.simproc import running_sim

from tuner.cli import cli


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """A small suite measured by the real simulator (`tuner bench --json`), and the simulator still
    running: (its URL, the suite file, the saved result as a dict)."""
    tmp = tmp_path_factory.mktemp("measured")
    suite, out = tmp / "suite.json", tmp / "base.json"
    suite.write_text(json.dumps({**SUITE, "sweep": {"concurrencies": [1, 2], "max_tokens": 8}}))
    with running_sim("--sim-noise", "0", speedup=50) as sim:
        r = CliRunner().invoke(cli, ["bench", "--url", sim.url, "--suite", str(suite), "--json", str(out)])
        assert r.exit_code == 0, r.output
        yield sim.url, suite, json.loads(out.read_text())


def _single(result: dict) -> dict:
    return next(r for r in result["records"] if r["phase"] == "single")


def _set(where: str, value):
    def change(result: dict) -> None:
        if where.startswith("single."):
            _single(result)[where.split(".", 1)[1]] = value
        else:
            result[where] = value
    return change


def _ends_before_start(result: dict) -> None:
    r = _single(result)
    r["start_s"], r["end_s"] = r["end_s"], r["start_s"]


def _nested(path) -> None:
    path.write_text("[" * 100_000 + "]" * 100_000)


CASES = [
    # (what, the change, what the line says after the file's name)
    ("records not a list", _set("records", 5), ": not a result `tuner bench --json` saves (TypeError: "),
    ("a time as text", _set("single.start_s", "7"), ": records[0]: start_s '7' is no measured figure"),
    ("resolved_spec not a mapping", _set("resolved_spec", 3),
     ": not a result `tuner bench --json` saves (TypeError: "),
    ("nested 100000 deep", None, ": not a result `tuner bench --json` saves (nested too deeply)"),
    ("a NaN token count", _set("single.completion_tokens", math.nan), ": records[0]: completion_tokens nan is no "
                                                                       "count"),
    ("a negative token count", _set("single.completion_tokens", -5), ": records[0]: completion_tokens -5 is no "
                                                                      "count"),
    ("a NaN clock rate", _set("time_scale", math.nan), ": time_scale nan is no clock rate"),
    ("an end before its start", _ends_before_start, ": records[0]: end_s "),
    ("10^30 tokens", _set("single.completion_tokens", 10 ** 30), ": 1 answer cannot be true (first: single a at "
                                                                  "8 tokens: completion_tokens 1000000000000000000000"),
]


@pytest.mark.parametrize("what, change, says", CASES, ids=[c[0] for c in CASES])
def test_a_baseline_no_run_can_have_saved_is_refused_naming_compare(measured, tmp_path, what, change, says):
    url, suite, result = measured
    base = tmp_path / "base.json"
    if change is None:
        _nested(base)
    else:
        changed = json.loads(json.dumps(result))
        change(changed)
        base.write_text(json.dumps(changed))
    before = sorted(tmp_path.iterdir())
    r = CliRunner().invoke(cli, ["bench", "--url", url, "--suite", str(suite), "--compare", str(base)])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.output)
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --compare: {base}{says}"), r.stderr
    assert sorted(tmp_path.iterdir()) == before


def test_the_unchanged_baseline_is_compared(measured, tmp_path):
    url, suite, result = measured
    base = tmp_path / "base.json"
    base.write_text(json.dumps(result))
    r = CliRunner().invoke(cli, ["bench", "--url", url, "--suite", str(suite), "--compare", str(base)])
    assert r.exit_code == 0 and "speedup" in r.stdout and "nan" not in r.stdout, r.output
