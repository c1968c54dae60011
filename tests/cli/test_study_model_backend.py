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


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def studies(tmp_path_factory):
    folder = tmp_path_factory.mktemp("model")
    (folder / "tables").mkdir()
    # the table lacks the large trees, so the default seed (5, 8, 32) fails at launch
    write_table(folder / "tables" / "node.json",
                table_from_profile(keep=lambda s: s.num_draft_tokens <= 24, load_s=900))
    (folder / "table.yaml").write_text(STUDY.format(name="table", space=SPACE,
                                                    model="{landscape: tables/node.json, seed: 4}"))
    (folder / "model.yaml").write_text(STUDY.format(name="model", space=SPACE,
                                                    model="{profile: dense-27b-tp1, seed: 4, noise: 0.01}"))
    for name in ("table", "model"):
        r = invoke("study", "run", folder / f"{name}.yaml")
        assert r.exit_code == 0, r.output
        done = re.search(r"done: (\d+) measured, (\d+) pruned", r.output)
        assert done and int(done[1]) + int(done[2]) == 6  # launches, whole or pruned
    return folder


def test_run_measures_without_a_server(studies):
    for name in ("table", "model"):
        config = load_study(studies / f"{name}.yaml")
        records = load_records(open_study(name, config.storage))
        launched = [r for r in records if r.status in ("measured", "failed", "pruned")]
        assert len(launched) == 6
        assert all(r.attrs.get("log_path") is None and r.attrs.get("model_duration_s", 0) > 0 for r in launched)
        assert not (studies / name / "trials").exists()  # no server, no per-trial log folder
    failed = [r for r in load_records(open_study("table", load_study(studies / "table.yaml").storage))
              if r.status == "failed"]
    assert failed and {r.failure_class for r in failed} == {"not_in_landscape"}  # the seed (5, 8, 32) at least
    assert all(r.effective.num_draft_tokens > 24 for r in failed)
    assert all(r.attrs["model_duration_s"] == 900 for r in failed)  # the table's load time


def test_status_pareto_export_report_list_compare(studies, tmp_path):
    table = studies / "table.yaml"
    status = json.loads(invoke("study", "status", table, "-f", "json").output)
    counts = status["counts"]
    assert counts["failed"] >= 1 and counts["failed"] + counts["measured"] + counts.get("pruned", 0) == 6
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
        str(studies / "tables" / "node.json"), "dense-27b-tp1"]


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
