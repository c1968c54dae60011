"""`tuner study confirm STUDY.yaml` after the file's dataset changed since the study was created:
refused as `tuner study run` refuses it, one line naming the file, what differs and both fixes, exit
2, nothing measured (QA: confirm re-measured the stored suite silently, exit 0, where run refused the
same file). From storage alone (`--study NAME --storage URL`) it confirms the stored study."""

from __future__ import annotations

import json

import optuna
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli

ROWS = [{"prompt": f"Write a Python function number {i} that adds two numbers.", "max_tokens": 16}
        for i in range(6)]


def test_confirm_refuses_a_file_whose_dataset_changed_and_confirms_from_storage(tmp_path):
    data_file = tmp_path / "d.jsonl"
    data_file.write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    suite = {"name": "ds", "dataset": {"path": "d.jsonl"}, "single": {"prompts": 2, "repeats": 1},
             "sweep": {"concurrencies": [1, 4]}, "warmup": {"requests": 1, "max_tokens": 4}}
    study_file = tmp_path / "c.yaml"
    study_file.write_text(yaml.safe_dump({**model_study_data("c", seed=1), "bench": {"suite": suite},
                                          "objectives": ["single_speedup", "speedup@4"]}))
    runner = CliRunner()
    r = runner.invoke(cli, ["study", "run", str(study_file)], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    url = f"sqlite:///{tmp_path / 'c.db'}"

    with data_file.open("a") as f:  # a row added after the study was created
        f.write(json.dumps({"prompt": "A row added since: return the JSON of a user record.", "max_tokens": 16}) + "\n")
    run = runner.invoke(cli, ["study", "run", str(study_file)], catch_exceptions=False)
    assert run.exit_code == 2 and "dataset.sha256 differs" in run.output, run.output
    before = optuna.load_study(study_name="c", storage=url).user_attrs
    args = ["--repeats", "2", "--max-candidates", "1"]
    r = runner.invoke(cli, ["study", "confirm", str(study_file), *args], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    assert r.output.strip().splitlines() == [
        f"error: {study_file}: study c in {url}: the study exists with a different suite (dataset.sha256 differs): "
        "the file changed since the study was created, and confirm re-measures the study as stored; restore the "
        f"file, or confirm from storage alone: tuner study confirm --study c --storage {url}"], r.output
    assert optuna.load_study(study_name="c", storage=url).user_attrs == before  # nothing measured nor stored

    r = runner.invoke(cli, ["study", "confirm", "--study", "c", "--storage", url, *args], catch_exceptions=False)
    assert r.exit_code == 0 and "confirmation" in r.output, r.output
