"""`tuner study run STUDY.yaml` on a node without the file's dataset (or suite file, or prompt file):
when the study is in its storage already, the one line names the file and key and gives the way on,
running the stored study by name (`--study NAME --storage URL`), which holds the suite it was created
with; without a stored study, the plain line (QA, qa207: it said only "d.jsonl not found")."""

from __future__ import annotations

import json

import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli

ROWS = [{"prompt": f"Write a Python function number {i} that adds two numbers.", "max_tokens": 16}
        for i in range(6)]


def _study(tmp_path, name: str, suite) -> str:
    study_file = tmp_path / f"{name}.yaml"
    study_file.write_text(yaml.safe_dump({**model_study_data(name, seed=1), "bench": {"suite": suite},
                                          "objectives": ["single_speedup", "speedup@4"]}))
    return str(study_file)


def _suite(**source) -> dict:
    return {"name": "ds", **source, "single": {"prompts": 2, "repeats": 1}, "sweep": {"concurrencies": [1, 4]},
            "warmup": {"requests": 1, "max_tokens": 4}}


def test_a_missing_dataset_of_a_stored_study_names_the_way_by_name(tmp_path):
    data_file = tmp_path / "d.jsonl"
    data_file.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    study_file = _study(tmp_path, "s", _suite(dataset={"path": "d.jsonl"}))
    runner = CliRunner()
    r = runner.invoke(cli, ["study", "create", study_file], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    url = f"sqlite:///{tmp_path / 's.db'}"
    data_file.rename(tmp_path / "elsewhere.jsonl")  # the second node has the study file alone

    r = runner.invoke(cli, ["study", "run", study_file, "--dry-run"], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {study_file}: bench.suite.dataset.path: {data_file} "
                                                   "not found"), r.output
    assert lines[0].endswith(f"give its name: tuner study run --study s --storage {url}"), r.output
    # the way on works: the stored study runs by name without the file
    r = runner.invoke(cli, ["study", "run", "--study", "s", "--storage", url, "--dry-run"], catch_exceptions=False)
    assert r.exit_code == 0, r.output


def test_a_missing_suite_file_or_prompt_file_of_a_stored_study_names_the_way_by_name(tmp_path):
    (tmp_path / "p.txt").write_text("Write a haiku about the sea.")
    prompts = [{"name": f"p{i}", "file": "p.txt", "max_tokens": 16} for i in range(2)]
    study_file = _study(tmp_path, "t", _suite(prompts=prompts))
    runner = CliRunner()
    assert runner.invoke(cli, ["study", "create", study_file], catch_exceptions=False).exit_code == 0
    (tmp_path / "p.txt").unlink()
    r = runner.invoke(cli, ["study", "run", study_file, "--dry-run"], catch_exceptions=False)
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert "bench.suite.prompts[0].file" in r.output and "tuner study run --study t --storage sqlite:///" in r.output

    suite_file = tmp_path / "gone.yaml"  # the same study, its suite named as a file that is not here
    other = _study(tmp_path, "t", str(suite_file.name))  # (t.yaml written again)
    r = runner.invoke(cli, ["study", "run", other, "--dry-run"], catch_exceptions=False)
    assert r.exit_code == 2 and len(r.output.strip().splitlines()) == 1, r.output
    assert f"bench.suite: {suite_file}: file not found" in r.output and "--study t --storage" in r.output


def test_without_a_stored_study_or_for_a_file_with_a_fault_the_line_is_the_plain_one(tmp_path):
    study_file = _study(tmp_path, "u", _suite(dataset={"path": "d.jsonl"}))
    r = CliRunner().invoke(cli, ["study", "run", study_file, "--dry-run"], catch_exceptions=False)
    assert r.exit_code == 2 and "not found" in r.output, r.output
    assert "--study" not in r.output, r.output  # no study u anywhere: running it by name is no way on

    (tmp_path / "p.txt").write_text("Write a haiku about the sea.")
    prompts = [{"name": f"p{i}", "file": "p.txt", "max_tokens": 16} for i in range(2)]
    runner = CliRunner()
    assert runner.invoke(cli, ["study", "create", _study(tmp_path, "v", _suite(prompts=prompts))]).exit_code == 0
    edited = _study(tmp_path, "v", _suite(prompts=[{"file": "p.txt", "max_tokens": 16}, prompts[1]]))  # a name left out
    r = runner.invoke(cli, ["study", "run", edited, "--dry-run"], catch_exceptions=False)
    assert r.exit_code == 2 and "prompts[0].name: required key is missing" in r.output, r.output
    assert "--study" not in r.output, r.output  # a fault in the file is fixed there, not run around
