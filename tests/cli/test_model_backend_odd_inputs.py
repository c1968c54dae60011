"""A study on ``server.backend: model`` given inputs nobody designed for (QA, qa98): a landscape table
whose figures cannot be true, a table none of whose rows the study's servers run, a profile whose
physics gives no server's figures. Each is one ``error:`` line naming the file and the key (a table
row by its index and its flags) and the fix, exit 2, and nothing written: checked before the study
exists. ``tuner`` runs in this process (click's runner: the same command, exit code and stderr, without
a new interpreter's imports; what is checked is the refusal, not the process); the
``search_efficiency.py`` benchmark as a real subprocess, as a user runs it."""

from __future__ import annotations

import copy
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support.cli_in_process import working_dir
from support.landscapes import ROOT, table_from_profile

from tuner.cli import cli

PROFILE = ROOT / "tuner" / "sim" / "profiles" / "k2.6-tp8-pcie.yaml"


def study_text(model: dict, args: dict | None = None) -> str:
    """A two-trial study of the quick suite on ``server.backend: model`` with ``model`` and ``args``."""
    server = {"backend": "model", "model_path": "moonshotai/Kimi-K2.6",
              "draft_model_path": "sim/kimi-k2.6-eagle3", "tp_size": 8, "args": args or {},
              "model": {"seed": 1, **model}}
    return yaml.safe_dump({"name": "odd", "search_space": "eagle3", "server": server,
                           "bench": {"suite": "quick"}, "sampler": {"seed": 1}, "budget": {"n_trials": 2}},
                          sort_keys=False)


@pytest.fixture(scope="module")
def table() -> dict:
    return table_from_profile(concurrency=32)


def _row(data: dict, spec: tuple[int, int, int]) -> tuple[int, dict]:
    keys = ("num_steps", "eagle_topk", "num_draft_tokens")
    return next((i, r) for i, r in enumerate(data["configs"]) if tuple(r[k] for k in keys) == spec)


def _tuner(*args, cwd: Path) -> subprocess.CompletedProcess:
    """``tuner ARGS`` run in ``cwd``, in this process; an exception escaping the command fails the
    test (as a traceback from a subprocess would)."""
    with working_dir(cwd):
        r = CliRunner().invoke(cli, [*map(str, args)], catch_exceptions=False)
    return subprocess.CompletedProcess(list(args), r.exit_code, r.stdout, r.stderr)


def _refused(folder: Path, *args) -> str:
    """``tuner ARGS`` run in ``folder``: exit 2, one ``error:`` line, nothing added to ``folder``."""
    before = sorted(folder.rglob("*"))
    r = _tuner(*args, cwd=folder)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.stderr, r.stderr
    assert sorted(folder.rglob("*")) == before
    return lines[0]


def _study(folder: Path, model: dict | None = None, args: dict | None = None) -> Path:
    path = folder / "odd.yaml"
    path.write_text(study_text(model or {"landscape": "node.json"}, args))
    return path


def _with_table(tmp_path: Path, data: dict | str) -> Path:
    study = _study(tmp_path)
    (tmp_path / "node.json").write_text(data if isinstance(data, str) else json.dumps(data))
    return study


def _fast_row(d):  # QA: 190x its baseline with an accept length of 1.9 was replayed as a measurement
    _, row = _row(d, (1, 1, 2))
    row["single_tok_per_s"] = 5000.0


def _slow_baseline(d):  # QA: a baseline at 0.5 tok/s made every setting read 100x faster
    d["baseline"]["single_tok_per_s"] = 0.5


def _baseline_accepts(d):  # QA: 3.0 loaded, and was never read
    d["baseline"]["accept_length"] = 3.0


def _huge_concurrency(d):  # QA: a level no suite may sweep loaded
    c = 10 ** 30
    d["concurrency"] = [32, c]
    for r in [d["baseline"], *d["configs"]]:
        r[f"tok_per_s@{c}"] = r["tok_per_s@32"]


def _small_tree_accepts_more(d):  # QA: a tree of 2 tokens accepting 2.5 a step loaded (bound was steps + 1)
    _, row = _row(d, (2, 2, 2))
    row["accept_length"] = 2.5


def _row_repeated(d):
    i, row = _row(d, (2, 4, 8))
    d["configs"].append(dict(row, single_tok_per_s=row["single_tok_per_s"] * 1.1))


def _negative_figure(d):
    _, row = _row(d, (3, 4, 16))
    row["tok_per_s@32"] = -5


@pytest.mark.parametrize("change, says", [
    (_fast_row, r"configs\[(\d+)\]\.single_tok_per_s: 5000 tok/s is 19\d\.\d\dx the baseline's [\d.]+ "
                r"\(baseline\.single_tok_per_s\) for steps=1 topk=1 draft=2 with its accept length [\d.]+: .*"
                r"check this figure and the baseline's \(a unit slip, a swapped column\)"),
    (_slow_baseline, r"configs\[0\]\.single_tok_per_s: .* tok/s is \d+\.\d\dx the baseline's 0\.5 "
                     r"\(baseline\.single_tok_per_s\) for steps=1 topk=1 draft=2 .*"
                     r"check this figure and the baseline's .*"),
    (_baseline_accepts, r"baseline\.accept_length: 3: the autoregressive baseline commits one token per "
                        r"forward \(accept length 1\); give 1 or leave the key out"),
    (_huge_concurrency, r"concurrency: 10{30} is more than the tuner's cap of 16384 requests at once; "
                        r"give the concurrencies the grid was measured at"),
    (_small_tree_accepts_more, r"configs\[(\d+)\]\.accept_length: 2\.5 tokens per verify step is more than "
                               r"steps=2 topk=2 draft=2 can accept \(.*at most 2\)"),
    (_row_repeated, r"configs\[(\d+)\]: steps=2 topk=4 draft=8 is listed twice \(configs\[\d+\] and "
                    r"configs\[\d+\]\); keep one row per setting"),
    (_negative_figure, r"configs\[(\d+)\]\.tok_per_s@32: expected a number above 0, got -5 "
                       r"\(the row of steps=3 topk=4 draft=16\)"),
])
def test_a_table_whose_figures_cannot_be_true_is_refused(tmp_path, table, change, says):
    data = copy.deepcopy(table)
    change(data)
    study = _with_table(tmp_path, data)
    line = _refused(tmp_path, "study", "run", study)
    assert re.fullmatch(rf"error: {re.escape(str(tmp_path / 'node.json'))}: {says}", line), line


@pytest.mark.parametrize("literal, says", [
    ("NaN", "NaN is not JSON; give the figure as a finite number (the row of steps=1 topk=1 draft=2)"),
    ("1e309", "1e309 is beyond what a float holds; give the figure as a finite number "
              "(the row of steps=1 topk=1 draft=2)"),
])
def test_a_figure_no_float_holds_is_quoted_as_written(tmp_path, table, literal, says):
    # QA: 1e309 was reported as "got inf", a figure the file does not hold
    data = copy.deepcopy(table)
    i, row = _row(data, (1, 1, 2))
    row["single_tok_per_s"] = "@@"
    study = _with_table(tmp_path, json.dumps(data).replace('"@@"', literal))
    line = _refused(tmp_path, "study", "run", study)
    assert line == f"error: {tmp_path / 'node.json'}: configs[{i}].single_tok_per_s: {says}"


def test_a_table_whose_rows_the_study_servers_refuse_is_refused(tmp_path, table):
    # QA: rejection sampling allows topk 1 only; a table of trees ran 6 launches, every one failed
    # (not_in_landscape), "done: 0 measured ... 6 failed", exit 0
    data = copy.deepcopy(table)
    data["configs"] = [r for r in data["configs"] if r["eagle_topk"] > 1]
    (tmp_path / "node.json").write_text(json.dumps(data))
    study = _study(tmp_path, args={"speculative_use_rejection_sampling": True})
    line = _refused(tmp_path, "study", "run", study)
    assert line.startswith(f"error: {study}: server.model.landscape: {tmp_path / 'node.json'}: none of its "
                           f"{len(data['configs'])} settings runs on this study's servers (steps=")
    assert "--speculative-use-rejection-sampling requires --speculative-eagle-topk 1" in line
    # the same table runs without it
    study.write_text(study_text({"landscape": "node.json"}))
    r = _tuner("study", "run", study, cwd=tmp_path)
    assert r.returncode == 0 and "done: " in r.stdout + r.stderr, r.stderr


def _profile_with(folder: Path, key: str, value: str) -> Path:
    """The shipped k2.6-tp8-pcie profile with ``key`` set to ``value``, as ``folder/p.yaml``."""
    text, n = re.subn(rf"^(\s*{key}):[^#\n]*", rf"\g<1>: {value} ", PROFILE.read_text(), flags=re.M)
    assert n == 1
    (folder / "p.yaml").write_text(text)
    return folder / "p.yaml"


@pytest.mark.parametrize("key, value, says", [
    # QA: 1000 s an all-reduce measured a baseline of 0.0 tok/s, and every trial over it
    ("allreduce_latency_us", "1e9", r"the model gives the autoregressive baseline [\d.e+-]+ tok/s \(single "
                                    r"request\), no server's figure \(at least 0\.001 and at most 1e\+09\); "
                                    r"check the profile's hardware and runtime figures for a unit slip"),
    # QA: the study was written, and its baseline failed (oom), exit 1
    ("total_weights_gb", "5000.0",
     r"the autoregressive baseline fails at launch \(oom\): .*Not enough memory.*"),
    # QA: a GB of workspace per draft token: 6 launches, every one oom, "done: 0 measured", exit 0
    ("workspace_kb_per_draft_token", "1e6",
     r"every one of the space's \d+ settings fails at launch \(oom; the first, steps=1 topk=1 draft=2: "
     r".*Not enough memory.*\)"),
])
def test_a_profile_on_which_nothing_can_be_measured_is_refused(tmp_path, key, value, says):
    _profile_with(tmp_path, key, value)
    study = _study(tmp_path, model={"profile": "p.yaml"})
    line = _refused(tmp_path, "study", "run", study)
    assert re.fullmatch(rf"error: {re.escape(str(study))}: server\.model\.profile: "
                        rf"{re.escape(str(tmp_path / 'p.yaml'))}: {says}", line), line


def _outside_the_space(d):  # QA: the benchmark said "none of its 1 settings lies in the search space"
    d["configs"] = [dict(d["configs"][0], num_steps=9, eagle_topk=1, num_draft_tokens=10)]


@pytest.mark.parametrize("change, says", [
    (_fast_row, r"configs\[\d+\]\.single_tok_per_s: 5000 tok/s is .*x the baseline's.*"),
    (_outside_the_space, r"its one setting lies outside the search space; give the space it was measured "
                         r"over \(--space\)"),
])
def test_the_benchmark_refuses_the_same_table_and_writes_nothing(tmp_path, table, change, says):
    data = copy.deepcopy(table)
    change(data)
    (tmp_path / "node.json").write_text(json.dumps(data))
    before = sorted(tmp_path.rglob("*"))
    r = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "search_efficiency.py"), "--landscape",
                        str(tmp_path / "node.json"), "--seeds", "1", "--budget", "2", "--strategies",
                        "random", "--suite", "quick", "--json", str(tmp_path / "out.json")],
                       capture_output=True, text=True, timeout=300, cwd=ROOT, check=False)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 1, r.stderr
    table_file = re.escape(str(tmp_path / "node.json"))
    assert re.fullmatch(rf"error: {table_file}: {says}", lines[0]), lines[0]
    assert sorted(tmp_path.rglob("*")) == before


def test_sim_landscape_writes_no_table_it_could_not_read(tmp_path):
    # QA: a profile at 1000 s an all-reduce: "wrote t.json: 949 settings", exit 0, and every study and
    # the benchmark refused the file (baseline.single_tok_per_s: ... got 0.0)
    _profile_with(tmp_path, "allreduce_latency_us", "1e9")
    line = _refused(tmp_path, "sim", "landscape", "--profile", "p.yaml", "--suite", "quick",
                    "--table", "t.json")
    assert line == ("error: --table: profile k2.6-tp8-pcie: baseline.single_tok_per_s: expected a number "
                    "above 0, got 0.0: the model's figures are no server's (check the profile's hardware and "
                    "runtime figures for a unit slip); no table written"), line
