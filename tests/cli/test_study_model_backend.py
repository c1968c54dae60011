"""A whole study on ``server.backend: model`` from the command line: ``tuner study run`` measures the
performance model or a landscape table with no process and no HTTP, and every other command reads
the study as any other."""

from __future__ import annotations

import json
import re

import pytest
import yaml
from click.testing import CliRunner
from support.landscapes import SPACE, table_from_profile, write_table
from support.prepared_once import prepared_once
from support.small_space import small_space

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.engine.records import load_records
from tuner.engine.study import open_study

STUDY = """name: {name}
search_space: {space}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  model: {model}
bench: {{suite: quick}}
sampler: {{seed: 1}}
budget: {{n_trials: 6}}
"""


#: The launches of the module's two studies: the four default seeds, (5, 8, 32) the table's failure
#: among them, and one the sampler proposes (six cost a study more and showed nothing more).
LAUNCHES = 5


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def _table_of(folder) -> str:
    """The landscape table the ``table`` study was created on: its absolute path, as the study stores it."""
    return yaml.safe_load((folder / "table.yaml").read_text())["server"]["model"]["landscape"]


def _build_studies(folder):
    """The module's two studies, each run to its budget. The table is an input beside the folder, as the
    search space is one in the checkout: the study stores its absolute path (compare shows it), so a
    table inside the folder would tie every copy to the folder it was built in (prepared_once refuses)."""
    tables = folder.parent / f"tables-{folder.name}"  # not a path under the folder, nor one it prefixes
    tables.mkdir(exist_ok=True)
    # the node ran out of memory on the large trees, so the default seed (5, 8, 32) fails at launch
    data = table_from_profile(load_s=900)
    data["configs"] = [row if row["num_draft_tokens"] <= 24 else
                       {**{k: row[k] for k in ("num_steps", "eagle_topk", "num_draft_tokens")}, "failure": "oom"}
                       for row in data["configs"]]
    node = write_table(tables / "node.json", data)
    budget = f"n_trials: {LAUNCHES}"
    (folder / "table.yaml").write_text(STUDY.format(name="table", space=SPACE,
                                                    model=f"{{landscape: {json.dumps(str(node))}, seed: 4}}")
                                       .replace("n_trials: 6", budget))
    (folder / "model.yaml").write_text(STUDY.format(name="model", space=SPACE,
                                                    model="{profile: dense-27b-tp1, seed: 4, noise: 0.01}")
                                       .replace("n_trials: 6", budget))
    for name in ("table", "model"):
        r = invoke("study", "run", folder / f"{name}.yaml")
        assert r.exit_code == 0, r.output
        done = re.search(r"done: (\d+) measured, (\d+) pruned, (\d+) failed", r.output)
        # launches: whole, pruned or failed
        assert done and int(done[1]) + int(done[2]) + int(done[3]) == LAUNCHES


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    """The two studies, run once per session (whichever xdist worker asks first); each worker gets
    its own copy of their folder (study files, SQLite storage, workdirs)."""
    return prepared_once(tmp_path_factory, "model", _build_studies)


def test_run_measures_without_a_server(studies):
    for name in ("table", "model"):
        config = load_study(studies / f"{name}.yaml")
        records = load_records(open_study(name, config.storage))
        launched = [r for r in records if r.status in ("measured", "failed", "pruned")]
        assert len(launched) == LAUNCHES
        assert all(r.attrs.get("log_path") is None and r.attrs.get("model_duration_s", 0) > 0 for r in launched)
        assert not (studies / name / "trials").exists()  # no server, no per-trial log folder
    failed = [r for r in load_records(open_study("table", load_study(studies / "table.yaml").storage))
              if r.status == "failed"]
    assert failed and {r.failure_class for r in failed} == {"oom"}  # the seed (5, 8, 32) at least, as listed
    assert all(r.effective.num_draft_tokens > 24 for r in failed)
    assert all(r.attrs["model_duration_s"] == 900 for r in failed)  # the table's load time


def test_status_pareto_export_report_list_compare(studies, tmp_path):
    table = studies / "table.yaml"
    status = json.loads(invoke("study", "status", table, "-f", "json").output)
    counts = status["counts"]
    assert counts["failed"] >= 1
    assert counts["failed"] + counts["measured"] + counts.get("pruned", 0) == LAUNCHES
    front = json.loads(invoke("study", "pareto", table, "-f", "json").output)
    assert front["points"] and front["baseline"]["single_tok_per_s"] > 0
    out = tmp_path / "best.yaml"
    r = invoke("study", "export", table, "--pick", "single", "-o", out)
    assert r.exit_code == 0, r.output
    text = out.read_text()
    assert "no server ran (backend model): landscape table" in text and "node.json" in text
    exported = yaml.safe_load(text)
    assert exported["speculative-num-steps"] == front["points"][0]["effective"]["num_steps"]
    assert exported["model-path"] == "moonshotai/Kimi-K2.6"
    r = invoke("study", "report", studies / "model.yaml", "-o", tmp_path / "r.html")
    assert r.exit_code == 0 and "model time" in (tmp_path / "r.html").read_text()
    listed = json.loads(invoke("study", "list", "--storage", load_study(table).storage, "-f", "json").output)
    assert [s["backend"] for s in listed] == ["model"]
    cmp = json.loads(invoke("study", "compare", table, studies / "model.yaml", "-f", "json").output)
    assert [side["hardware"]["profile"] for side in (cmp["a"], cmp["b"])] == [
        _table_of(studies), "dense-27b-tp1"]


def test_status_csv_and_json_give_each_launch_its_modelled_gpu_time(studies):
    """QA: `status -f csv` gave a model-backend launch only `duration_s`, the process's wall (near 0:
    no server ran), and not the modelled GPU time the timeout counts."""
    import csv
    import io

    table = studies / "table.yaml"
    rows = list(csv.DictReader(io.StringIO(invoke("study", "status", table, "-f", "csv").output)))
    trials = json.loads(invoke("study", "status", table, "-f", "json").output)["trials"]
    launched = [t for t in trials if t["status"] in ("measured", "failed", "pruned")]
    assert len(launched) == LAUNCHES
    by_number = {int(row["trial"]): row for row in rows}
    for t in launched:
        assert t["model_duration_s"] and t["model_duration_s"] > t["duration_s"]
        assert float(by_number[t["number"]]["model_duration_s"]) == t["model_duration_s"]
    assert {t["model_duration_s"] for t in launched if t["status"] == "failed"} == {900}  # the table's load_s


def test_dry_run_names_the_source_and_writes_nothing(tmp_path):
    path = tmp_path / "dry.yaml"
    path.write_text(STUDY.format(name="dry", space=SPACE, model="{profile: k2.6-tp8-pcie}"))
    r = invoke("study", "run", path, "--dry-run")
    assert r.exit_code == 0 and "no server is launched" in r.output and "profile k2.6-tp8-pcie" in r.output
    assert not (tmp_path / "dry.db").exists()


def test_a_bad_profile_fails_before_anything_is_written(tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text(STUDY.format(name="bad", space=SPACE, model="{profile: no-such-profile}"))
    r = CliRunner().invoke(cli, ["study", "run", str(path)])
    assert r.exit_code == 2 and "no-such-profile" in r.output and "no such simulator profile" in r.output
    assert not (tmp_path / "bad.db").exists()


def test_a_profile_name_is_shipped_or_a_path_from_the_study_file_never_from_the_cwd(tmp_path, monkeypatch):
    # QA: profile: myprof (a profile file, no '/' nor .yaml) ran from the folder holding a file
    # myprof, and from anywhere else failed with "error: myprof: no such simulator profile", no
    # study file nor key named: the same study file meant what the current folder held.
    (tmp_path / "cwd").mkdir()
    (tmp_path / "cwd" / "myprof").write_text((SPACE.parents[1] / "tuner" / "sim" / "profiles" /
                                              "k2.6-tp8-pcie.yaml").read_text())
    monkeypatch.chdir(tmp_path / "cwd")
    path = tmp_path / "bare.yaml"
    for profile in ("myprof", "''"):
        path.write_text(STUDY.format(name="bare", space=SPACE, model=f"{{profile: {profile}}}"))
        r = CliRunner().invoke(cli, ["study", "run", str(path)])
        line = r.output.strip()
        assert r.exit_code == 2 and line.splitlines() == [line], r.output
        assert line.startswith(f"error: {path}: server.model.profile: ") and "./" in line, line
        assert not (tmp_path / "bare.db").exists()


def test_run_timeout_is_modelled_gpu_time(tmp_path):
    path = tmp_path / "night.yaml"
    path.write_text(STUDY.format(name="night", space=SPACE, model="{profile: k2.6-tp8-pcie, seed: 2}")
                    .replace("bench: {suite: quick}", "bench: {suite: seed}").replace("n_trials: 6", "n_trials: 50"))
    r = invoke("study", "run", path, "--timeout", "2h")
    assert r.exit_code == 0, r.output
    assert "within the modelled GPU time budget" in r.output and "modelled GPU time 1h" in r.output
    config = load_study(path)
    study = open_study("night", config.storage)
    from tuner.engine.baseline import find_baseline

    spent = find_baseline(study).attrs["model_duration_s"] + sum(
        r.attrs.get("model_duration_s", 0.0) for r in load_records(study))
    assert 3600 < spent <= 2 * 3600  # the seed suite's baseline and a few trials: well under a wall second each


def test_no_output_overwrites_the_studys_own_files(studies, tmp_path):
    table = studies / "table.yaml"
    db = studies / "table.db"
    before = {p: p.read_bytes() for p in (table, db)}
    for args in (("study", "report", table, "-o", db), ("study", "export", table, "--pick", "knee", "-o", table),
                 ("study", "export", table, "--pick", "knee", "-o", db, "--format", "json"),
                 ("study", "compare", table, studies / "model.yaml", "-o", db)):
        r = CliRunner().invoke(cli, [str(a) for a in args])
        assert r.exit_code == 2 and "would destroy it" in r.output, (args, r.output)
    assert {p: p.read_bytes() for p in before} == before
    assert invoke("study", "status", table).exit_code == 0


def test_a_run_whose_every_launch_fails_says_so(tmp_path):
    write_table(tmp_path / "one.json", table_from_profile(keep=lambda s: s.num_draft_tokens == 64))
    path = tmp_path / "fails.yaml"
    path.write_text(STUDY.format(name="fails", space=SPACE, model="{landscape: one.json, seed: 1}")
                    .replace("n_trials: 6", "n_trials: 2").replace("sampler: {seed: 1}",
                    "sampler: {seed: 1}\ndefault_seed_trials: false\nseed_trials:\n  - {speculative_num_steps: 3, "
                    "speculative_eagle_topk: 1, speculative_num_draft_tokens: 4}\n  - {speculative_num_steps: 2, "
                    "speculative_eagle_topk: 1, speculative_num_draft_tokens: 3}"))  # two the table lacks
    r = CliRunner().invoke(cli, ["study", "run", str(path)])
    assert r.exit_code == 0, r.output
    done = re.search(r"done: (\d+) measured, (\d+) pruned, (\d+) failed", r.output)
    assert done and done.groups() == ("0", "0", "2")
    # QA: it sent the user to "each trial's server log ... in the workdir": no server ran, no log
    assert "every launch this run failed" in r.output and "server log" not in r.output, r.output
    assert "no server ran" in r.output


def _run_refused_on_table(tmp_path, name: str, data: dict):
    """``study run`` of a study on the table ``data`` (written as NAME.json): refused, exit 2, in one
    line. Returns the study file and that line."""
    write_table(tmp_path / f"{name}.json", data)
    path = tmp_path / f"{name}.yaml"
    path.write_text(STUDY.format(name=name, space=SPACE, model=f"{{landscape: {name}.json, seed: 1}}"))
    r = CliRunner().invoke(cli, ["study", "run", str(path)])
    line = r.output.strip()
    assert r.exit_code == 2 and line.splitlines() == [line], r.output
    return path, line


def test_a_table_with_no_setting_in_the_space_is_refused_before_anything_is_written(tmp_path):
    # QA: a table whose every row lies outside the study's space (steps=9 topk=1 draft=10): the
    # study was created and every launch failed as not_in_landscape, a night of nothing; the
    # benchmark refuses such a table ("none of its 1 settings lies in the search space").
    data = table_from_profile(keep=lambda s: s.num_draft_tokens == 2)
    data["configs"] = [{**data["configs"][0], "num_steps": 9, "eagle_topk": 1, "num_draft_tokens": 10}]
    path, line = _run_refused_on_table(tmp_path, "wide", data)
    assert line.startswith(f"error: {path}: server.model.landscape: ") and "search space" in line, line
    assert "its one setting lies outside the search space" in line, line  # was "none of its 1 settings lies"
    assert not (tmp_path / "wide.db").exists()


def test_a_study_file_and_another_study_name_are_refused(studies):
    r = CliRunner().invoke(cli, ["study", "run", str(studies / "table.yaml"), "--study", "other"])
    assert r.exit_code == 2 and "--study" in r.output and "is study table" in r.output


def test_create_checks_the_workdir_run_will_need(tmp_path):
    (tmp_path / "afile").write_text("")
    path = tmp_path / "wd.yaml"
    path.write_text(STUDY.format(name="wd", space=SPACE, model="{profile: k2.6-tp8-pcie}") + "workdir: afile/x\n")
    r = CliRunner().invoke(cli, ["study", "create", str(path)])
    assert r.exit_code == 2 and "workdir" in r.output, r.output
    assert not (tmp_path / "wd.db").exists()


def test_a_closed_stdout_does_not_stop_the_run(tmp_path):
    import subprocess
    import sys

    path = tmp_path / "pipe.yaml"
    # three launches: the run goes on for seconds after the first line is read (six added nothing)
    path.write_text(STUDY.format(name="pipe", space=SPACE, model="{profile: k2.6-tp8-pcie, seed: 3}")
                    .replace("n_trials: 6", "n_trials: 3"))
    proc = subprocess.Popen([sys.executable, "-m", "tuner", "study", "run", str(path)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline()  # `| head -1`: one line read, then the pipe closed
    proc.stdout.close()
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "stdout was closed; the run goes on" in err and "Traceback" not in err
    records = load_records(open_study("pipe", load_study(path).storage))
    assert len([r for r in records if r.status in ("measured", "failed", "pruned")]) == 3


def test_export_flags_that_cannot_be_right_are_refused(studies):
    table = studies / "table.yaml"
    for args in (("--pick", "single", "--min-speedup-c32", "nan"), ("--pick", "single", "-o", "")):
        r = CliRunner().invoke(cli, ["study", "export", str(table), *args])
        assert r.exit_code == 2, (args, r.output)
    r = CliRunner().invoke(cli, ["study", "export", str(table), "--pick", "single", "--min-speedup-c32", "inf"])
    assert r.exit_code == 2 and "not a finite number" in r.output


def test_compare_looks_for_a_study_named_b_in_a_s_storage(studies, tmp_path, monkeypatch):
    """QA: the README says B's storage defaults to A's; `compare A.yaml NAME` said "no such study
    file, and no storage to look in" unless --storage was given."""
    monkeypatch.chdir(tmp_path)  # no studies/*.db here to fall back on
    url = load_study(studies / "table.yaml").storage
    assert invoke("study", "copy", studies / "table.yaml", "table-again", "--storage", url).exit_code == 0
    try:
        r = CliRunner().invoke(cli, ["study", "compare", str(studies / "table.yaml"), "table-again", "-f", "json"])
        assert r.exit_code == 0, r.output
        assert json.loads(r.output)["b"]["study"] == "table-again"
    finally:
        invoke("study", "delete", "table-again", "--storage", url, "--yes")


def test_a_server_arg_given_as_text_runs_as_sglang_reads_it(tmp_path):
    """QA: ``server.args: {mem_fraction_static: "0.8"}`` on the model backend died with TypeError (exit 1,
    a half-made study left); SGLang's argparse and the simulator read the text as the number."""
    path = tmp_path / "text.yaml"
    path.write_text(STUDY.format(name="text", space=small_space(tmp_path),
                                 model="{profile: k2.6-tp8-pcie, seed: 1}")
                    .replace("  model:", '  args: {mem_fraction_static: "0.8", context_length: "8192"}\n  model:')
                    .replace("n_trials: 6", "n_trials: 1"))
    r = CliRunner().invoke(cli, ["study", "run", str(path)])
    assert r.exit_code == 0, r.output
    assert "done: 1 measured" in r.output and "Traceback" not in r.output


def _with_args(tmp_path, name: str, args: str, space=SPACE):
    """Study NAME (one launch, the performance model) with ``server.args: ARGS``, in ``space``: a study
    that runs takes a small one (tests/support/small_space.py), what it launches is not tested here."""
    path = tmp_path / f"{name}.yaml"
    path.write_text(STUDY.format(name=name, space=space, model="{profile: k2.6-tp8-pcie, seed: 1}")
                    .replace("  model:", f"  args: {args}\n  model:").replace("n_trials: 6", "n_trials: 1"))
    return path


@pytest.mark.parametrize("args", ["{stream_interval: 0}", "{stream_interval: -1}", "{log_level: INFO}",
                                  "{log_level: Warning}"])
def test_a_server_arg_sglang_launches_with_runs(tmp_path, args):
    """QA: arguments the study check took but the simulator's parser refused ended `tuner study run`
    on the model backend in a traceback (ValueError from parsed_server_args, exit 1, a half-made
    study left). SGLang 0.5.23 launches these: --stream-interval is a plain int (0 or less streams
    every step: managers/scheduler_components/output_streamer.py), and --log-level any text its
    logger takes upper-cased (utils/common.py configure_logger: getattr(logging, level.upper()))."""
    path = _with_args(tmp_path, "runs", args, small_space(tmp_path))
    r = CliRunner().invoke(cli, ["study", "run", str(path)])
    assert r.exit_code == 0, r.output
    assert "done: 1 measured" in r.output and "Traceback" not in r.output


@pytest.mark.parametrize("args, key", [
    ("{log_level: verbose}", "log_level"), ("{log_level: trace}", "log_level"),
    ("{log_level: '1'}", "log_level"),
    ("{sidecar_args: Infinity}", "sidecar_args"), ("{forward_hooks: '[NaN]'}", "forward_hooks")])
def test_an_arg_sglang_refuses_is_one_line_and_nothing_is_written(tmp_path, args, key):
    """SGLang 0.5.23 fails such a launch before loading: a log level its logger lacks (configure_logger:
    AttributeError, module 'logging' has no attribute 'VERBOSE'), JSON its json_list_type (orjson)
    refuses (NaN, Infinity; the check read it with json.loads, which takes them, and the run failed
    its baseline). The study check says so up front."""
    r = CliRunner().invoke(cli, ["study", "run", str(_with_args(tmp_path, "lvl", args))])
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2 and len(lines) == 1, r.output
    assert f"server.args: {key}: " in lines[0] and "Traceback" not in r.output, lines
    assert sorted(p.name for p in tmp_path.iterdir()) == ["lvl.yaml"]


def test_status_says_a_figure_the_suite_never_measures_is_not_there(tmp_path):
    # QA: a sweep-only suite: status printed "baseline: single request 0.0 tok/s" for requests never
    # sent; a single-only suite: "aggregate tok/s " and nothing after it.
    for name, single, levels, objective in (("sweep-only", [], [32], "speedup@32"),
                                           ("single-only", [128], [], "single_speedup")):
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump({
            "name": name, "prompts": [{"name": "fib", "text": "Write a Python function for Fibonacci."}],
            "single": {"lengths": single, "repeats": 1}, "sweep": {"concurrencies": levels, "max_tokens": 256},
            "warmup": {"requests": 1, "max_tokens": 8}, "ignore_eos": True}))
        path = tmp_path / f"{name}-study.yaml"
        path.write_text(STUDY.format(name=name, space=small_space(tmp_path),
                                     model="{profile: k2.6-tp8-pcie, seed: 1}")
                        .replace("bench: {suite: quick}", f"bench: {{suite: {name}.yaml}}\nobjectives: [{objective}]")
                        .replace("n_trials: 6", "n_trials: 1"))
        assert invoke("study", "run", path).exit_code == 0
        r = invoke("study", "status", path)
        line = next(x for x in r.output.splitlines() if x.startswith("baseline:"))
        assert "0.0 tok/s" not in line and not line.rstrip().endswith("tok/s"), line
        assert "not measured" in line, line


def test_export_warns_when_the_best_setting_is_slower_than_the_baseline(tmp_path):
    # QA (qa50): on a node where every setting is slower than no speculation, export wrote the
    # pick, 0.01-0.02x the baseline on both objectives, with exit 0 and not a word about it.
    data = table_from_profile(keep=lambda s: s.num_draft_tokens <= 8)
    for row in data["configs"]:
        row["single_tok_per_s"] = data["baseline"]["single_tok_per_s"] * 0.6
        row["tok_per_s@32"] = data["baseline"]["tok_per_s@32"] * 0.5
    write_table(tmp_path / "slow.json", data)
    path = tmp_path / "slow.yaml"
    path.write_text(STUDY.format(name="slow", space=SPACE, model="{landscape: slow.json, seed: 1, noise: 0}")
                    .replace("n_trials: 6", "n_trials: 2"))
    assert invoke("study", "run", path).exit_code == 0
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", "single", "-o", str(tmp_path / "b.yaml")])
    assert r.exit_code == 0, r.output
    assert "slower than the autoregressive baseline on every objective" in r.stderr, r.output
    assert "single_speedup 0.60x" in r.stderr and "speedup@32 0.50x" in r.stderr, r.stderr
    assert "WARNING: trial" in (tmp_path / "b.yaml").read_text()
    # a pick faster on one objective is no such case
    fast = table_from_profile(keep=lambda s: s.num_draft_tokens <= 8)
    write_table(tmp_path / "fast.json", fast)
    path.write_text(path.read_text().replace("name: slow", "name: fast").replace("slow.json", "fast.json"))
    assert invoke("study", "run", path).exit_code == 0
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", "single", "-o", str(tmp_path / "f.yaml")])
    assert r.exit_code == 0 and "slower than the autoregressive baseline" not in r.output + r.stderr, r.output


def test_a_table_whose_rows_in_the_space_all_failed_is_refused_naming_them(tmp_path):
    # QA (qa133): a table with (3, 1, 4) listed as failed (oom) and one measured row outside the space
    # was refused as "its one setting lies outside the search space": it has two rows, one in the space
    data = table_from_profile(keep=lambda s: (s.num_steps, s.eagle_topk, s.num_draft_tokens) == (3, 1, 4))
    data["configs"] = [{**data["configs"][0], "num_steps": 9, "eagle_topk": 1, "num_draft_tokens": 10},
                       {"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4, "failure": "oom"}]
    _, line = _run_refused_on_table(tmp_path, "failed", data)
    assert "its one measured setting lies outside the search space" in line, line
    assert "the 1 row in it failed at launch (steps=3 topk=1 draft=4: oom)" in line, line
    assert not (tmp_path / "failed.db").exists()


def test_export_warns_when_the_throughput_pick_loses_to_the_baseline_at_its_load(tmp_path):
    # QA (qa156): on a node where speculation wins at one request and loses at C=32 (every setting
    # below the baseline there), `export --pick throughput` wrote its 0.9x pick with no word; the
    # single pick, faster at its own load, is no such case
    data = table_from_profile(keep=lambda s: s.num_draft_tokens <= 8)
    for row in data["configs"]:
        row["single_tok_per_s"] = data["baseline"]["single_tok_per_s"] * 1.5
        row["tok_per_s@32"] = data["baseline"]["tok_per_s@32"] * 0.9
    write_table(tmp_path / "loss32.json", data)
    path = tmp_path / "loss32.yaml"
    path.write_text(STUDY.format(name="loss32", space=SPACE, model="{landscape: loss32.json, seed: 1, noise: 0}")
                    .replace("n_trials: 6", "n_trials: 2"))
    assert invoke("study", "run", path).exit_code == 0
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", "throughput", "-o", str(tmp_path / "t.yaml")])
    assert r.exit_code == 0, r.output
    assert "(--pick throughput), is slower than the autoregressive baseline there (speedup@32 0.90x)" in r.stderr, \
        r.stderr
    assert "WARNING: trial" in (tmp_path / "t.yaml").read_text()
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", "single", "-o", str(tmp_path / "s.yaml")])
    assert r.exit_code == 0 and "slower than the autoregressive baseline" not in r.output + r.stderr, r.stderr
