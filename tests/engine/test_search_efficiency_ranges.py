"""benchmarks/search_efficiency.py's numeric flags out of range: one line naming the flag that is
wrong and the value given, exit 2, nothing run (the benchmark's ``main`` in this process: the
process itself is not under test here, its checks are)."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "search_efficiency.py"
FLAGS = ("--seeds", "--budget", "--jobs", "--noise", "--hours", "--load-s")


def bench():
    spec = importlib.util.spec_from_file_location("search_efficiency", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("search_efficiency", module)
    spec.loader.exec_module(module)
    return module


def run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = bench().main(list(args))
        except SystemExit as exc:  # argparse's own refusals
            code = exc.code
    return code, out.getvalue(), err.getvalue()


def test_a_flag_out_of_range_is_named_with_the_value_given(tmp_path):
    # QA: every one of these printed the same line, the ranges of five flags, naming none as wrong
    for flag, value in (("--seeds", "0"), ("--budget", "-3"), ("--jobs", "0"), ("--noise", "-0.1"),
                        ("--noise", "nan"), ("--hours", "inf"), ("--load-s", "-1")):
        code, out, err = run("--profiles", "no-such-profile", "--cache", str(tmp_path / "cache"),
                             "--seeds", "1", flag, value)
        line = err.strip()
        assert code == 2 and out == "", (flag, value, err)
        assert line.splitlines() == [line], (flag, value, line)
        assert line.startswith(f"error: {flag} ") and line.endswith(f"got {float(value):g}"), (flag, value, line)
        others = [f for f in FLAGS if f != flag and f in line]
        assert others == [], (flag, line)
        assert not (tmp_path / "cache").exists()  # refused before any table is built
