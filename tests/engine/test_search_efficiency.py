"""benchmarks/search_efficiency.py end to end with tiny settings: it runs the real study engine on
``server.backend: model``, scores what ``tuner study export`` would return, takes profiles by name or
path and landscape tables, prints its tables to stdout and progress to stderr, and refuses bad
options with one line."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.landscapes import table_from_profile, write_table
from support.prepared_once import prepared_once

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "search_efficiency.py"


def run_process(*args: str, timeout: float = 180) -> subprocess.CompletedProcess:
    """The benchmark as a user runs it: a real ``python benchmarks/search_efficiency.py`` process."""
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, check=False)


def run(*args: str) -> subprocess.CompletedProcess:
    """The benchmark's ``main`` in this process: the same exit code, stdout and stderr as
    :func:`run_process` without a new interpreter's imports (about a CPU second each); an exception
    fails the test, as a traceback from :func:`run_process` would. One test
    (:func:`test_tiny_run_prints_the_tables`) keeps the real process."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = bench().main(list(args))
        except SystemExit as exc:  # argparse's own refusals
            code = exc.code
    return subprocess.CompletedProcess(list(args), code, out.getvalue(), err.getvalue())


def refused(*args: str) -> subprocess.CompletedProcess:
    """:func:`run` for options the benchmark refuses before it runs anything."""
    return run(*args)


def bench():
    spec = importlib.util.spec_from_file_location("search_efficiency", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("search_efficiency", module)
    spec.loader.exec_module(module)
    return module


def _shipped_tables(folder: Path) -> None:
    """The shipped profiles' tables (suite seed, eagle3.yaml), as the benchmark caches them."""
    b = bench()
    for profile in b.PROFILES:
        b.truth_for(profile, cache=folder)


@pytest.fixture(scope="module")
def shipped_tables(tmp_path_factory) -> Path:
    return prepared_once(tmp_path_factory, "landscapes", _shipped_tables)


@pytest.fixture
def shipped_cache(shipped_tables, tmp_path) -> Path:
    """A ``--cache`` holding the shipped profiles' tables, built once per session (each ~0.6 CPU s
    of the performance model, built again by every test that ran a shipped profile on a cache of
    its own), a copy per test; for the tests that do not check what the cache gets."""
    return Path(shutil.copytree(shipped_tables, tmp_path / "cache"))


def test_tiny_run_prints_the_tables(tmp_path, shipped_cache):
    out = tmp_path / "runs.json"
    table = write_table(tmp_path / "node.json", table_from_profile("dense-27b-tp1", suite="seed"))
    # one seed: a run per landscape and strategy (4 runs) shows the tables, and one line per run
    p = run_process("--profiles", "k2.6-tp8-pcie", "--landscape", str(table), "--strategies", "default,grid",
                    "--seeds", "1", "--budget", "8", "--cache", str(shipped_cache), "--json", str(out))
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert any(line.startswith("## k2.6-tp8-pcie") for line in lines)
    assert any(line.startswith("## dense-27b-tp1-table") for line in lines)
    rows = [line.split("|")[1].strip() for line in lines if line.startswith("| ")]
    assert rows.count("default") == 2 and rows.count("grid") == 2
    head = next(line for line in lines if line.startswith("| strategy"))
    assert "exp@8" in head and "hit med/p90" in head and "HV@8" in head and "GPU h" in head
    # scored where the runs end, launch 8 of 8 (QA: --budget 32 was scored at launch 16)
    assert "at launch 8:" in p.stderr and "at launch 16" not in p.stderr
    # progress goes to stderr, one line per run, with the command
    assert p.stderr.count("k2.6-tp8-pcie default seed") == 1 and "command:" in p.stderr
    assert p.stderr.count(" seed ") == 4, p.stderr
    data = json.loads(out.read_text())
    runs = data["runs"]
    assert len(runs) == 4 and all(r["launches"] == 8 and len(r["export_ok"]) == 8 for r in runs)
    # the grid replays bench_speculative.py's order: its first config is steps=1 topk=1 draft=2,
    # which is also the speedup@32 optimum of K2.6 PCIe (the article's setting)
    grid = [r for r in runs if r["strategy"] == "grid" and r["target"] == "k2.6-tp8-pcie"]
    assert all(r["launches_to"][1] == 1 and r["export_ok"][0][1] for r in grid)
    assert all(0 < r["hv_frac"]["8"] <= 1.0 + 1e-9 for r in runs)
    assert all(0 < r["model_hours"][0] < r["model_hours"][-1] for r in runs)


def test_the_exported_picks_are_export_s_own(shipped_cache):
    """The score reads the picks export makes: the same trials `build_export` writes out."""
    from tuner.engine.baseline import find_baseline
    from tuner.engine.records import load_records
    from tuner.results.export import build_export

    b = bench()  # puts benchmarks/ on the path
    from searchbench.runs import run_study_on, score

    target, truth = b.truth_for("k2.6-tp8-nvlink", cache=shipped_cache)
    study, _ = run_study_on(target, truth, "random", 3, space=b.SPACE, suite="seed", budget=12, noise=0.04)
    records = [r for r in load_records(study) if r.status is not None]
    result = score(records, truth, find_baseline(study).attrs, "random", target.name, 3, horizon=12)
    for i, pick in enumerate(("single", "throughput")):
        exported = build_export(study, pick).spec
        assert result.export_ratio[i] == truth.values[exported][i] / truth.optimum[i]
    assert result.export_ok[-1] == [x >= 0.97 for x in result.export_ratio] and len(result.export_ok) == 12


def test_a_missed_pick_is_told_unseen_or_misread(shipped_cache):
    """A pick that misses at the horizon is "unseen" when no setting truly within 3% had been
    measured by then and "misread" when one had; ``found_at`` is the first launch that measured one
    (recounted here from the trials), never later than the first hit or than a right export."""
    from tuner.engine.baseline import find_baseline
    from tuner.engine.records import MEASURED, launched, load_records

    b = bench()
    from searchbench.runs import RunResult, run_study_on, score

    made = RunResult("default", "x", 0, found_at=[3, None], export_ok=[[False, False]] * 2 + [[False, False]] * 3)
    assert made.misses(5) == ["misread", "unseen"] and made.misses(2) == ["unseen", "unseen"]
    made.export_ok[-1] = [True, False]
    assert made.misses(5) == [None, "unseen"]

    kinds = set()
    # dense-27b-tp1 seed 3 first measures a single-request setting within 3% but not within 1.5%
    for profile, seed in (("dense-27b-tp1", 3), ("dense-27b-tp1", 1), ("k2.6-tp8-pcie", 4)):
        target, truth = b.truth_for(profile, cache=shipped_cache)
        study, _ = run_study_on(target, truth, "random", seed, space=b.SPACE, suite="seed", budget=8, noise=0.04)
        records = [r for r in load_records(study) if r.status is not None]
        result = score(records, truth, find_baseline(study).attrs, "random", target.name, seed, horizon=8)
        within = [None, None]
        for n, r in enumerate([r for r in records if launched(r.status, r.attrs)], start=1):
            for i in range(2):
                if (within[i] is None and r.status == MEASURED
                        and truth.values[r.effective][i] >= 0.97 * truth.optimum[i]):
                    within[i] = n
        assert result.found_at == within
        for i, kind in enumerate(result.misses(8)):
            kinds.add(kind)
            first_right = next((n for n, ok in enumerate(result.export_ok, start=1) if ok[i]), None)
            assert first_right is None or within[i] <= first_right
            assert result.launches_to[i] is None or within[i] <= result.launches_to[i]
            assert (kind is None) == result.export_ok[-1][i]
            assert kind != "misread" or within[i] is not None
    assert kinds == {None, "unseen", "misread"}, kinds  # the three runs show every outcome


def test_unknown_strategy_is_one_line_and_exit_2():
    p = refused("--strategies", "default,simulated-annealing", "--seeds", "1")
    assert p.returncode == 2
    assert p.stderr.strip().splitlines() == [p.stderr.strip()]
    assert "simulated-annealing" in p.stderr and "default" in p.stderr


def test_bad_knobs_are_one_line_naming_the_flag_and_exit_2():
    b = bench()
    for args, flag, says in ((["--prune-options", '{"z": -1}'], "--prune-options", "z: input should be greater than 0"),
                             (["--prune-options", "{z"], "--prune-options", "not JSON"),
                             (["--prune-options", "[1]"], "--prune-options", "expected a JSON object"),
                             (["--options", '{"explore": 1}'], "--options",
                              "explore: unknown key (did you mean 'explore_weight'?)"),
                             # a run that tuned nothing, said nowhere
                             (["--options", '{"explore_weight": 0.7}', "--strategies", "random"], "--options",
                              "leaves out"),
                             # QA: the last of the two was kept, silently
                             (["--options", '{"explore_weight": 0.5, "explore_weight": 0.7}'], "--options",
                              "explore_weight: given twice"),
                             (["--load-s", "-3"], "--load-s", "--load-s from 0 to a year"),
                             # QA: these were tracebacks, some only after every run had finished
                             (["--load-s", "nan"], "--load-s", "--load-s from 0 to a year"),
                             (["--hours", "nan"], "--hours", "--hours from 1/60"),
                             (["--hours", "1e-9"], "--hours", "--hours from 1/60"),
                             (["--only", "("], "--only", "is not a regular expression"),
                             (["--only", "zzz"], "--only", "matches no landscape"),
                             # QA: exit 0 with empty tables, nothing run
                             (["--profiles", ","], "--profiles", "names no landscape"),
                             # QA: a numpy traceback in the middle of the runs
                             (["--first-seed", "4294967296"], "--first-seed", "from 0 to 4294967295"),
                             (["--first-seed", "-1"], "--first-seed", "from 0 to"),
                             (["--strategies", ""], "--strategies", "unknown ''"),
                             (["--suite", "nosuch"], "nosuch", "unknown suite"),
                             (["--space", "/nonexistent/space.yaml"], "space.yaml", "file not found"),
                             (["--json", "/tmp"], "--json", "is a folder"),
                             # QA: FileExistsError traceback from mkdir
                             (["--cache", str(b.SPACE)], "--cache", "is a file; give a folder"),
                             (["--json", str(b.SPACE)], "--json", "is one of the benchmark's inputs")):
        p = refused(*args, "--seeds", "1")
        assert p.returncode == 2, args
        line = p.stderr.strip()
        assert line.splitlines() == [line] and flag in line, (args, line)
        assert says in line and "Traceback" not in line, (args, line)
    knobs = b.parse_args(["--prune-options", '{"z": 2.5, "margin": 0.02}'])
    assert b.parse_knobs(knobs) == (None, {"z": 2.5, "margin": 0.02})


def test_bad_profile_and_bad_landscape_are_config_errors(tmp_path):
    p = run("--profiles", str(ROOT / "no-such-profile.yaml"), "--seeds", "1")
    assert p.returncode == 2
    assert "no-such-profile.yaml" in p.stderr and "Traceback" not in p.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "x", "concurrency": 32, "baseline": {"single_tok_per_s": 1.0}}))
    p = run("--landscape", str(bad), "--seeds", "1")
    assert p.returncode == 2 and p.stderr.strip() == f"error: {bad}: baseline.tok_per_s@32: required key is " \
                                                     "missing (the table's concurrency includes 32)"


def test_a_profile_where_no_setting_fits_is_one_line_and_writes_no_table(tmp_path):
    # QA: the baseline fits in 90.5 GB per GPU, no speculative setting does: the benchmark wrote a
    # table with "configs": [] to its cache, then refused it naming the cache file
    # ("cache/nofit-....json: configs: expected a non-empty list ...").
    text = (ROOT / "tuner" / "sim" / "profiles" / "k2.6-tp8-pcie.yaml").read_text()
    assert "gpu_memory_gb: 141.0" in text
    profile = tmp_path / "nofit.yaml"
    profile.write_text(text.replace("gpu_memory_gb: 141.0", "gpu_memory_gb: 90.5")
                       .replace("name: k2.6-tp8-pcie", "name: nofit"))
    cache = tmp_path / "cache"
    p = run("--profiles", str(profile), "--seeds", "1", "--suite", "quick", "--cache", str(cache))
    assert p.returncode == 2, p.stderr
    line = p.stderr.strip().splitlines()[-1]
    assert "nofit" in line and "fits" in line and "cache" not in line, line
    assert not cache.exists() or not list(cache.iterdir())


def test_json_in_a_missing_folder_is_refused_before_any_run(tmp_path):
    # QA: --json NODIR/x.json passed the check, every run ran, then the write died with a traceback
    # (FileNotFoundError), the runs' figures lost.
    table = write_table(tmp_path / "node.json", table_from_profile(keep=lambda s: s.num_draft_tokens <= 4))
    out = tmp_path / "nodir" / "x.json"
    p = run("--landscape", str(table), "--strategies", "random", "--seeds", "1", "--budget", "2",
            "--suite", "quick", "--json", str(out))
    line = p.stderr.strip()
    assert p.returncode == 2 and line.splitlines() == [line], p.stderr
    assert "--json" in line and "does not exist" in line and "seed 0" not in line, line
    assert not out.parent.exists()


def test_a_table_scored_at_a_level_the_suite_never_sweeps_is_refused(tmp_path):
    # QA: a table at concurrency 64 (scored on speedup@64) with --suite quick (sweeps 1, 8, 32): the
    # runs measured a level the suite never runs, and once the model backend reported only the
    # suite's levels, every run died with a BaselineError traceback.
    table = write_table(tmp_path / "c64.json", table_from_profile(concurrency=64, keep=lambda s: s.num_draft_tokens <= 4))
    p = run("--landscape", str(table), "--strategies", "random", "--seeds", "1", "--budget", "2", "--suite", "quick")
    line = p.stderr.strip().splitlines()[-1]
    assert p.returncode == 2 and "Traceback" not in p.stderr, p.stderr
    assert str(table) in line and "speedup@64" in line and "--suite" in line and "1, 8, 32" in line, line
    assert "seed 0" not in p.stderr


def test_a_profile_name_with_a_slash_stays_in_the_cache(tmp_path):
    # QA: the cached table's file name was the profile's name as written: name "../escaped" wrote
    # the table beside --cache, outside it; "sub/../../x" died with a FileNotFoundError traceback.
    text = (ROOT / "tuner" / "sim" / "profiles" / "dense-27b-tp1.yaml").read_text()
    cache = tmp_path / "outer" / "cache"
    for name in ("../escaped", "sub/../../x"):
        profile = tmp_path / "p.yaml"
        profile.write_text(text.replace("name: dense-27b-tp1", f"name: '{name}'"))
        p = run("--profiles", str(profile), "--seeds", "1", "--strategies", "random", "--budget", "2",
                "--suite", "quick", "--cache", str(cache))
        assert p.returncode == 0 and "Traceback" not in p.stderr, p.stderr
        assert f"## {name}" in p.stdout
    assert [q.name for q in (tmp_path / "outer").iterdir()] == ["cache"]
    assert len(list(cache.iterdir())) == 2 and all(q.parent == cache for q in cache.rglob("*.json"))


def test_json_over_a_profiles_file_is_refused(tmp_path):
    # QA: --profiles p.yaml --json p.yaml ran, then wrote the runs' JSON over the profile.
    profile = tmp_path / "p.yaml"
    text = (ROOT / "tuner" / "sim" / "profiles" / "dense-27b-tp1.yaml").read_text()
    profile.write_text(text)
    p = run("--profiles", str(profile), "--json", str(profile), "--seeds", "1", "--strategies", "random",
            "--budget", "2", "--suite", "quick", "--cache", str(tmp_path / "cache"))
    line = p.stderr.strip()
    assert p.returncode == 2 and line.splitlines() == [line], p.stderr
    assert "--json" in line and "is one of the benchmark's inputs" in line, line
    assert profile.read_text() == text


def test_grid_mirrors_bench_speculative_defaults():
    b = bench()
    grid = b.bench_speculative_grid()
    # steps (1, 3, 5, 7) x topk (1, 2, 4, 8) x draft (2, 4, 8, 16, 32), trees within steps*topk+1
    assert len(grid) == 47
    assert grid[:6] == [(1, 1, 2), (1, 2, 2), (1, 4, 2), (1, 4, 4), (1, 8, 2), (1, 8, 4)]
    assert grid[-1] == (7, 8, 32)
    assert all(s * k + 1 >= d for s, k, d in grid)
    assert b.grid_launches(b.SPACE) == 43  # topk 1 rows SGLang rewrites to the same chain are reused


def test_a_night_with_and_without_pruning(tmp_path, shipped_cache):
    """--hours runs every study for that much modelled GPU time; --prune both runs it twice."""
    out = tmp_path / "night.json"
    p = run("--profiles", "dense-27b-tp1", "--strategies", "default", "--seeds", "1", "--hours", "2",
            "--prune", "both", "--cache", str(shipped_cache), "--json", str(out))
    assert p.returncode == 0, p.stderr
    assert "## dense-27b-tp1: a night of 2 modelled GPU hours" in p.stdout
    head = next(line for line in p.stdout.splitlines() if line.startswith("| strategy") and "launches@2h" in line)
    assert "exp@2h" in head and "regret@2h" in head and "near front" in head
    runs = json.loads(out.read_text())["runs"]
    by = {(r["strategy"], r["seed"]): r for r in runs}
    assert {s for s, _ in by} == {"default", "default+prune"}
    assert sorted(by) == [("default", 0), ("default+prune", 0)]  # one seed: its night with and without
    for seed in (0,):
        off, on = by[("default", seed)], by[("default+prune", seed)]
        assert off["pruned"] == 0 and not off["prune_checks"] and off["by_hours"]["2"]["whole"] == off["by_hours"]["2"]["launches"]
        night = on["by_hours"]["2"]
        assert on["pruned"] > 0 and night["launches"] == night["whole"] + night["pruned"]
        assert 2 * 3600 >= 3600 * on["model_hours"][night["launches"] - 1]  # what it counts fits in the night
        # pruning stopped no setting the whole suite would have put within 1% of the front
        assert on["prune_checks"]["pruned"] == on["pruned"] and on["prune_checks"]["near_front"] == 0


def test_the_test_bed_is_split_and_its_sets_run(tmp_path, monkeypatch, capsys):
    """The training and test sets share no landscape; a (shrunk) set builds generated profiles and
    family tables, runs, and prints one table per set and per family."""
    b = bench()
    from searchbench import sets

    train, test = sets.SETS["train"], sets.SETS["test"]
    assert not set(train["generator"]) & set(test["generator"])
    assert not set(train["families"]) & set(test["families"])
    assert len(train["generator"]) + len(test["generator"]) >= 100 and len(test["families"]) >= 2
    monkeypatch.setitem(sets.SETS, "train", {"generator": range(0, 2), "families": {"A": range(0, 1)}})
    code = b.main(["--set", "train", "--strategies", "default,random", "--seeds", "1", "--budget", "6",
                   "--cache", str(tmp_path), "--groups-only"])
    out = capsys.readouterr().out
    assert code == 0
    for title in ("## train: 3 landscapes", "## train / generated profiles: 2 landscapes", "## train / family A: 1"):
        assert title in out, out
    rows = [line for line in out.splitlines() if line.startswith("| default") or line.startswith("| random")]
    assert len(rows) == 6 and "## gen-0" not in out  # --groups-only: no table per landscape
    assert "missed unseen/misread" in out
    for row in rows:  # two picks per run, 3 runs: at most 6 missed, each told one way or the other
        unseen, misread = (int(x) for x in row.strip(" |").split("|")[-1].strip().split("/"))
        assert 0 <= unseen + misread <= 6
    assert len(list(tmp_path.glob("gen-0-*.json"))) == 1 and len(list(tmp_path.glob("A-0-*.json"))) == 1


def test_generated_profiles_are_plausible_and_varied():
    bench()
    from searchbench.profilegen import draw_profile

    from tuner.sim.model import PerfModel

    profiles = [draw_profile(seed) for seed in range(8)]
    assert draw_profile(3) == profiles[3]  # a seed is a profile
    assert {p.hardware.tp_size for p in profiles} <= {1, 2, 4, 8}
    assert len({p.model.moe_layers > 0 for p in profiles}) == 2  # MoE and dense
    for p in profiles:
        model = PerfModel(p)
        assert model.kv_budget_ok(None, 32, p.runtime.default_context_tokens)[0]  # the baseline fits
        assert p.model.total_weights_gb / p.hardware.tp_size < p.hardware.gpu_memory_gb
        step = model.decode_step_time_s(1, None)
        assert 0.002 < step < 0.2, (p.name, step)  # 5 to 500 tok/s on one request


def test_a_night_s_ceiling_the_group_table_and_the_what_ifs(tmp_path, monkeypatch, capsys):
    """With --hours and --prune both: each run's pruning ceiling (whole launches against the same
    settings stopped after the probe), a night table per set, and the knobs: --load-s replaces every
    launch's load time, --prune-options reaches the studies' budget.prune."""
    b = bench()
    from searchbench import sets

    # One landscape of a family written apart from the simulator's model: the night's figures per
    # run are what is checked, and each run of a night is a whole GP-driven study (CPU-bound).
    monkeypatch.setitem(sets.SETS, "train", {"families": {"A": range(0, 1)}})
    common = ["--set", "train", "--strategies", "default", "--seeds", "1", "--hours", "4",
              "--cache", str(tmp_path), "--groups-only"]
    runs = {}
    for label, extra in (("as is", ["--prune", "both"]), ("short load", ["--prune", "both", "--load-s", "60"]),
                         ("never prune", ["--prune", "on", "--prune-options", '{"startup_trials": 1000}'])):
        out = tmp_path / f"{label}.json"
        assert b.main([*common, *extra, "--json", str(out)]) == 0
        runs[label] = {(r["target"], r["strategy"]): r for r in json.loads(out.read_text())["runs"]}
        printed = capsys.readouterr().out
        assert "## A-0: a night" not in printed, printed  # --groups-only: no night table per landscape
        if label == "never prune":  # no run without pruning: no off -> on table
            continue
        assert "## train: a night of 4 modelled GPU hours, pruning off -> on" in printed, printed
        night = printed.split("pruning off -> on")[1]
        row = next(line for line in night.splitlines() if line.startswith("| default "))
        assert row.count("x (") == 2  # the ratio and the ceiling columns
    for key, r in runs["as is"].items():
        c = r["ceiling"]
        assert 0 < c["probe_s"] < c["whole_s"] and c["ratio"] > 1, c
        short = runs["short load"][key]["ceiling"]
        # a shorter load: cheaper launches, and pruning can win more of each
        assert short["whole_s"] < c["whole_s"] and short["ratio"] > c["ratio"]
    pruning = [key for key in runs["as is"] if key[1] == "default+prune"]
    assert sum(runs["as is"][key]["pruned"] for key in pruning) > 0
    assert all(runs["never prune"][key]["pruned"] == 0 for key in pruning)


def test_the_pruning_check_judges_against_the_front_the_study_reports():
    """A pruned launch is counted near the front when no point of the study's final front beats
    its whole-suite figures by more than 1% on every objective. That front is the one status,
    export and the pruning rule use: a setting measured twice stands at the mean of its readings,
    not at its luckier one (dense-27b-tp1, seed 12, of the night benchmark: pruned against a mean
    that beat it by 1.02% and 2.2%, it read within 1% of one of that setting's two readings)."""
    bench()  # puts benchmarks/ on the path
    from searchbench.night import prune_checks
    from searchbench.targets import Truth

    from tuner.engine.model_suite import ModelFigures
    from tuner.engine.records import MEASURED, PRUNED, TrialRecord, spec_key
    from tuner.sglang.rules import SpecConfig

    front, pruned = SpecConfig(4, 8, 7), SpecConfig(4, 4, 7)

    def record(number, spec, values, status=MEASURED):
        return TrialRecord(number, "PRUNED" if status == PRUNED else "COMPLETE", status, spec, spec, values,
                           True, {"effective_key": spec_key(spec)}, None)

    class Backend:  # the pruned launch's whole-suite draw: 2.74x and 2.40x over the baseline
        def full_figures(self, spec, label):
            assert spec == pruned and label == "trials/3"
            return ModelFigures(274.0, {32: 2401.0})

    truth = Truth("t", ("single_speedup", "speedup@32"), {front: (2.77, 2.45), pruned: (2.71, 2.38)},
                  (2.77, 2.45), (1.0, 1.0), 1.0, 2)
    base = {"single_tok_per_s": 100.0, "tok_per_s@32": 1000.0}
    twice = [record(1, front, [2.728, 2.507]), record(2, front, [2.808, 2.401]),
             record(3, pruned, None, PRUNED)]
    assert prune_checks(twice, truth, base, Backend())["near_front"] == 0  # the mean (2.768, 2.454) beats it
    # one reading that beats it by more than 1% on both objectives: not near either
    once = [record(1, front, [2.808, 2.507]), record(3, pruned, None, PRUNED)]
    assert prune_checks(once, truth, base, Backend())["near_front"] == 0
    # one reading that does not: near the front
    close = [record(1, front, [2.74, 2.507]), record(3, pruned, None, PRUNED)]
    assert prune_checks(close, truth, base, Backend()) == {"pruned": 1, "near_front": 1, "near_true_front": 0}
    # the case the night benchmark found 27 times: the setting that pruned it, measured again later,
    # falls to a mean (2.75, 2.47) within 1% of the pruned launch, though its first reading beat it
    fell = [record(1, front, [2.80, 2.50]), record(3, pruned, None, PRUNED), record(4, front, [2.70, 2.44])]
    assert prune_checks(fell, truth, base, Backend())["near_front"] == 1


def test_rows_outside_the_search_space_are_not_the_truth(tmp_path):
    """QA: a table measured over a wider grid than the space made every strategy look like it
    failed: its optimum (steps 10) was one no search of eagle3.yaml can propose."""
    b = bench()
    data = table_from_profile("k2.6-tp8-pcie")
    inside = b.table_target(write_table(tmp_path / "inside.json", data)).truth(b.SPACE)
    # 11x and 12x its baseline: within what 11 tokens a verify step can give (a table refuses more)
    data["configs"].append({"num_steps": 10, "eagle_topk": 1, "num_draft_tokens": 11,
                            "single_tok_per_s": 11 * data["baseline"]["single_tok_per_s"],
                            "tok_per_s@32": 12 * data["baseline"]["tok_per_s@32"]})
    target = b.table_target(write_table(tmp_path / "wider.json", data))
    assert target.truth().optimum[0] > 10  # every row: the unreachable one is the optimum
    wider = target.truth(b.SPACE)
    assert wider.outside == 1 and wider.optimum == inside.optimum and wider.n_configs == inside.n_configs
    p = run("--landscape", str(tmp_path / "wider.json"), "--strategies", "random", "--seeds", "1", "--budget", "2",
            "--cache", str(tmp_path / "cache"))
    assert p.returncode == 0 and "1 settings of its table lie outside the search space" in p.stderr, p.stderr


def test_hypervolume_of_a_landscape_whose_front_has_no_volume():
    # QA: a landscape of one setting (or of two, each best at one objective): the true front's
    # hypervolume above the nadir is 0, and HV@8 / HV@16 read 0.000 though every setting was measured.
    bench()  # puts benchmarks/ on the path
    from searchbench.runs import hv_fraction
    from searchbench.targets import truth_of_table

    from tuner.config.landscape import parse_landscape
    from tuner.sglang.rules import SpecConfig

    a, b, c = SpecConfig(3, 1, 4), SpecConfig(1, 1, 2), SpecConfig(2, 1, 3)
    rows = {a: (60.0, 700.0), b: (40.0, 800.0), c: (50.0, 600.0)}

    def truth(specs):
        data = {"name": "t", "concurrency": 32, "baseline": {"single_tok_per_s": 20.0, "tok_per_s@32": 700.0},
                "configs": [{**s.as_dict(), "single_tok_per_s": rows[s][0], "tok_per_s@32": rows[s][1]}
                            for s in specs]}
        return truth_of_table(parse_landscape(data, "t.json"), "t")

    one = truth([a])
    assert one.front_hv == 0 and hv_fraction([a], one) == 1.0
    two = truth([a, b])
    assert two.front_hv == 0
    assert hv_fraction([a, b], two) == 1.0 and hv_fraction([a], two) == 0.5 and hv_fraction([], two) == 0.0
    three = truth([a, b, c])  # c lifts the nadir's corner: the front has a volume, as before
    assert three.front_hv > 0 and hv_fraction([a, b], three) == 1.0


def test_hypervolume_of_a_flat_landscape_counts_the_front_values_not_its_settings():
    # QA: a flat table (every setting with the same figures) has a front of no volume whose every
    # setting is optimal; HV@8 read 0.008 (8 of its 949 settings measured) though every run had the
    # optimum at its first launch. The share is of the front's distinct points: one measured is all.
    bench()  # puts benchmarks/ on the path
    from searchbench.runs import hv_fraction
    from searchbench.targets import truth_of_table

    from tuner.config.landscape import parse_landscape
    from tuner.sglang.rules import SpecConfig

    a, b, c, d = SpecConfig(3, 1, 4), SpecConfig(1, 1, 2), SpecConfig(2, 1, 3), SpecConfig(4, 1, 5)

    def truth(rows):
        data = {"name": "t", "concurrency": 32, "baseline": {"single_tok_per_s": 20.0, "tok_per_s@32": 700.0},
                "configs": [{**s.as_dict(), "single_tok_per_s": v[0], "tok_per_s@32": v[1]}
                            for s, v in rows.items()]}
        return truth_of_table(parse_landscape(data, "t.json"), "t")

    flat = truth({s: (40.0, 800.0) for s in (a, b, c)})
    assert flat.front_hv == 0 and hv_fraction([b], flat) == 1.0 and hv_fraction([], flat) == 0.0
    # two front points, each best at one objective, one of them held by two settings
    tied = truth({a: (60.0, 700.0), b: (40.0, 800.0), d: (40.0, 800.0)})
    assert tied.front_hv == 0
    assert hv_fraction([d], tied) == 0.5 and hv_fraction([a, b], tied) == 1.0 and hv_fraction([a, d], tied) == 1.0


def test_two_landscapes_of_one_name_are_refused_naming_their_files(tmp_path):
    # QA: --landscape a.json --landscape b.json, both named "same", said "two targets share a name
    # (same, same)": which files to rename was left to guess. The line names both files.
    data = {"name": "same", "concurrency": 32, "baseline": {"single_tok_per_s": 20.0, "tok_per_s@32": 700.0},
            "configs": [{"num_steps": 1, "eagle_topk": 1, "num_draft_tokens": 2, "single_tok_per_s": 30.0,
                         "tok_per_s@32": 750.0}]}
    a, b = write_table(tmp_path / "a.json", data), write_table(tmp_path / "b.json", data)
    out = tmp_path / "runs.json"
    p = run("--landscape", str(a), "--landscape", str(b), "--strategies", "random", "--seeds", "1",
            "--budget", "2", "--json", str(out), "--cache", str(tmp_path / "cache"))
    assert p.returncode == 2 and not out.exists() and not (tmp_path / "cache").exists()
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and str(a) in lines[0] and str(b) in lines[0] and "'same'" in lines[0], p.stderr


def test_a_table_none_of_whose_rows_is_in_the_space_is_one_line(tmp_path):
    # QA: a table of one row outside eagle3.yaml (steps 12) was refused, exit 2, but the error came
    # after a 'command: ...' line: two lines where every other refusal is one.
    data = {"name": "wide", "concurrency": 32, "baseline": {"single_tok_per_s": 20.0, "tok_per_s@32": 700.0},
            "configs": [{"num_steps": 12, "eagle_topk": 1, "num_draft_tokens": 13, "single_tok_per_s": 30.0,
                         "tok_per_s@32": 750.0}]}
    table = write_table(tmp_path / "wide.json", data)
    out = tmp_path / "runs.json"
    p = run("--landscape", str(table), "--strategies", "random", "--seeds", "1", "--budget", "2",
            "--json", str(out), "--cache", str(tmp_path / "cache"))
    assert p.returncode == 2 and not out.exists() and not (tmp_path / "cache").exists()
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "wide.json" in lines[0], p.stderr


def test_an_input_given_twice_is_one_line_naming_the_flag_and_nothing_runs(tmp_path):
    # QA: --profiles X,X (or a name and a path to the same file, or --landscape F twice) built the
    # profile's table, then said "two landscapes share the name 'X' (F, F); give each its own name":
    # the same file twice, named as if two files clashed, after writing to the cache.
    table = write_table(tmp_path / "node.json", table_from_profile("dense-27b-tp1", suite="seed"))
    shipped = ROOT / "tuner" / "sim" / "profiles" / "dense-27b-tp1.yaml"
    cases = [
        (("--profiles", "dense-27b-tp1,dense-27b-tp1"), "error: --profiles: 'dense-27b-tp1' is given twice"),
        (("--profiles", f"dense-27b-tp1,{shipped}"),
         f"error: --profiles: 'dense-27b-tp1' and '{shipped}' are the same file ({shipped})"),
        (("--landscape", str(table), "--landscape", f"{tmp_path}/./node.json"),
         f"error: --landscape: '{table}' and '{tmp_path}/./node.json' are the same file ({table})"),
        (("--landscape", str(table), "--landscape", str(table)), f"error: --landscape: '{table}' is given twice"),
        (("--profiles", str(table), "--landscape", str(table)),
         f"error: --profiles '{table}' and --landscape '{table}' are the same file ({table})"),
    ]
    for args, start in cases:
        out, cache = tmp_path / "runs.json", tmp_path / "cache"
        p = run(*args, "--strategies", "random", "--seeds", "1", "--budget", "2", "--json", str(out),
                "--cache", str(cache))
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 2 and len(lines) == 1 and lines[0].startswith(start), (args, p.stderr)
        assert lines[0].endswith("; give it once"), p.stderr
        assert not out.exists() and not cache.exists() and p.stdout == "", args  # nothing built, nothing run
