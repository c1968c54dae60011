"""benchmarks/search_efficiency.py's numeric flags out of range: one line naming the flag that is
wrong and the value given, exit 2, nothing run (the benchmark's ``main`` in this process: the
process itself is not under test here, its checks are)."""

from __future__ import annotations

import json
from pathlib import Path

from test_search_efficiency import run as run_in_process  # the benchmark's main, in this process

ROOT = Path(__file__).resolve().parents[2]
FLAGS = ("--seeds", "--budget", "--jobs", "--noise", "--hours", "--load-s")


def run(*args: str) -> tuple[int, str, str]:
    """The benchmark's ``main`` in this process (:func:`test_search_efficiency.run`): exit code,
    stdout, stderr."""
    done = run_in_process(*args)
    return done.returncode, done.stdout, done.stderr


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


def one_row_table(path: Path, name: str = "one-row") -> Path:
    """A landscape of one setting, SGLang's automatic (3, 1, 4): the first seed trial measures it."""
    path.write_text(json.dumps({
        "name": name, "concurrency": 32, "load_s": 60,
        "baseline": {"single_tok_per_s": 30.0, "tok_per_s@32": 900.0},
        "configs": [{"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4, "accept_length": 2.5,
                     "single_tok_per_s": 60.0, "tok_per_s@32": 990.0}]}))
    return path


def test_noise_a_study_file_refuses_is_refused_and_its_bound_runs(tmp_path):
    """QA: ``--noise 0.5`` ran and printed tables, of studies whose ``server.model.noise: 0.5`` a
    study file refuses (the draws reach the model backend's clips: figures no server reads)."""
    from tuner.config.study import MAX_MODEL_NOISE

    table = one_row_table(tmp_path / "node.json")
    common = ("--landscape", str(table), "--strategies", "random", "--seeds", "1", "--budget", "2",
              "--suite", "quick")
    for value in ("0.5", "0.7", str(MAX_MODEL_NOISE * 1.01)):
        code, out, err = run(*common, "--noise", value)
        line = err.strip()
        assert code == 2 and out == "" and line.splitlines() == [line], (value, err)
        assert line.startswith("error: --noise ") and f"to {MAX_MODEL_NOISE}" in line, line
        assert line.endswith(f"got {float(value):g}"), line
    code, out, err = run(*common, "--noise", str(MAX_MODEL_NOISE))
    assert code == 0, err
    assert "## one-row" in out and "| random " in out


def test_a_strategy_given_twice_is_one_line_and_nothing_runs(tmp_path):
    """QA: ``--strategies default,default`` ran every run of default twice, and its table and JSON
    counted each seed twice."""
    for strategies in ("default,default", "random,default,random"):
        code, out, err = run("--profiles", "no-such-profile", "--cache", str(tmp_path / "cache"),
                             "--strategies", strategies, "--seeds", "1")
        line = err.strip()
        assert code == 2 and out == "" and line.splitlines() == [line], (strategies, err)
        assert line.startswith("--strategies: ") and "given twice" in line, line
        assert not (tmp_path / "cache").exists()


def test_groups_only_prints_a_table_for_the_given_landscapes(tmp_path):
    """QA: ``--landscape node.json --groups-only`` ran every run and printed no table: only a set's
    landscapes were in a group. They now have a group of their own."""
    table = one_row_table(tmp_path / "node.json", name="my-node")
    code, out, err = run("--landscape", str(table), "--strategies", "default,random", "--seeds", "1",
                         "--budget", "2", "--suite", "quick", "--noise", "0", "--groups-only")
    assert code == 0, err
    assert "## my-node" not in out  # still no table per landscape
    heads = [line for line in out.splitlines() if line.startswith("## given")]
    assert len(heads) == 1 and heads[0].endswith(": 1 landscapes"), out
    rows = {line.split("|")[1].strip(): line for line in out.splitlines() if line.startswith("| ")}
    # one setting, measured by the first seed trial: every pick right, for both strategies
    assert "| 1/1 " in rows["default"] and "100.0%" in rows["default"], rows
    assert "| 1/1 " in rows["random"], rows


def test_two_profiles_of_one_name_are_named_as_given(tmp_path):
    """QA: a shipped profile and a copy of it (``--profiles dense-27b-tp1,d.yaml``) share a name and
    one cached table: the line named that cache file twice, and neither input the user gave."""
    shipped = ROOT / "tuner" / "sim" / "profiles" / "dense-27b-tp1.yaml"
    copy = tmp_path / "d.yaml"
    copy.write_text(shipped.read_text())
    code, out, err = run("--profiles", f"dense-27b-tp1,{copy}", "--strategies", "random", "--seeds", "1",
                         "--budget", "2", "--cache", str(tmp_path / "cache"))
    line = err.strip()
    assert code == 2 and out == "" and line.splitlines() == [line], err
    assert "'dense-27b-tp1'" in line and f"--profiles {copy}" in line and "--profiles dense-27b-tp1," in line, line
    assert str(tmp_path / "cache") not in line, line


def test_a_set_flag_naming_no_set_or_one_set_twice_is_one_line(tmp_path):
    """QA: ``--set ,`` ran the three shipped profiles (20 seeds each by default), and ``--set
    shipped,shipped`` built the set's tables, then refused two landscapes of one name naming one
    cached table twice."""
    for value, says in ((",", "names no set"), ("", "names no set"), ("shipped,shipped", "'shipped' is given twice")):
        cache = tmp_path / f"cache{len(value)}"
        code, out, err = run("--set", value, "--strategies", "random", "--seeds", "1", "--budget", "1",
                             "--cache", str(cache))
        line = err.strip()
        assert code == 2 and out == "" and line.splitlines() == [line], (value, err)
        assert line.startswith("--set: ") and says in line, (value, line)
        assert not cache.exists(), value  # refused before any table is built


def test_a_set_s_landscape_given_again_is_named_by_its_set(tmp_path):
    """QA: ``--set shipped --profiles k2.6-tp8-pcie`` named the set's cached table, a path the user
    never gave; the line names the set."""
    code, out, err = run("--set", "shipped", "--profiles", "k2.6-tp8-pcie", "--strategies", "random",
                         "--seeds", "1", "--budget", "1", "--cache", str(tmp_path / "cache"))
    line = err.strip()
    assert code == 2 and out == "" and line.splitlines() == [line], err
    assert "(--set shipped, --profiles k2.6-tp8-pcie)" in line and str(tmp_path) not in line, line


def test_the_header_says_every_load_time_given(tmp_path):
    """QA: ``--load-s 0`` (no model load: a what-if) ran as asked, but the tables' header left it
    out, reading as if each landscape's own load time had run."""
    table = one_row_table(tmp_path / "node.json")
    for value in ("0", "5"):
        code, out, err = run("--landscape", str(table), "--strategies", "random", "--seeds", "1", "--budget", "1",
                             "--suite", "quick", "--noise", "0", "--load-s", value)
        assert code == 0, err
        header = out.splitlines()[0]
        assert header.startswith("# search efficiency:") and f", load {value} s," in header, header
    code, out, err = run("--landscape", str(table), "--strategies", "random", "--seeds", "1", "--budget", "1",
                         "--suite", "quick", "--noise", "0")
    assert code == 0 and ", load " not in out.splitlines()[0], out
