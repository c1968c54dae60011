"""Commands that read a study from its storage (status, pareto, export, report, compare, copy,
delete) take the study file when a file it names is gone or changed since the study ran: the
storage keeps the suite and space the study measured. A warning on stderr says what is missing;
`run`, which measures, still refuses. Real studies on ``server.backend: model`` via the CLI."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data
from support.prepared_once import prepared_once

from tuner.cli import cli


@pytest.fixture(scope="module")
def study_with_dataset_built(tmp_path_factory):
    """A 2-launch study of a dataset suite, run once per session (whichever xdist worker asks first;
    each worker reads its own copy), its dataset still there."""
    return prepared_once(tmp_path_factory, "gone", _build_study_with_dataset)


def _build_study_with_dataset(folder):
    rows = [{"prompt": f"Summarize item {i} of the catalogue in one paragraph.", "max_tokens": 16} for i in range(6)]
    (folder / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = model_study_data("gone", seed=1)
    data["bench"] = {"suite": {"name": "mine", "dataset": {"path": "d.jsonl", "n": 4},
                               "sweep": {"concurrencies": [1, 32]}}}
    (folder / "s.yaml").write_text(yaml.safe_dump(data))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(folder)
        mp.delenv("TUNER_STORAGE", raising=False)
        result = CliRunner().invoke(cli, ["study", "run", "s.yaml"], catch_exceptions=False)
    assert result.exit_code == 0, result.output


@pytest.fixture()
def study_with_dataset(study_with_dataset_built, tmp_path, monkeypatch):
    """The study above, copied for this test (SQLite file, study file, dataset); then its dataset
    file moved away (as when the study's database and file are copied off the GPU node without the
    data)."""
    shutil.copytree(study_with_dataset_built, tmp_path, dirs_exist_ok=True)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    (tmp_path / "d.jsonl").rename(tmp_path / "elsewhere.jsonl")
    return tmp_path


READERS = [
    ["study", "status", "s.yaml"],
    ["study", "status", "s.yaml", "-f", "json"],
    ["study", "pareto", "s.yaml"],
    ["study", "export", "s.yaml", "--pick", "knee", "-o", "best.yaml"],
    ["study", "report", "s.yaml", "-o", "r.html"],
    ["study", "compare", "s.yaml", "s.yaml"],
    ["study", "copy", "s.yaml", "copied"],
]


@pytest.mark.parametrize("argv", READERS, ids=lambda a: " ".join(a[1:2] + a[3:4]))
def test_a_reader_takes_the_study_file_when_its_dataset_is_gone(study_with_dataset, argv):
    result = CliRunner().invoke(cli, argv, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: ")]
    assert len(warnings) >= 1 and "bench.suite.dataset.path" in warnings[0] and "d.jsonl not found" in warnings[0]
    assert "read from its storage" in warnings[0]
    if "export" in argv:
        assert "num_draft_tokens" in (study_with_dataset / "best.yaml").read_text().replace("-", "_")


def test_run_still_refuses_and_a_fault_in_the_study_file_is_still_an_error(study_with_dataset):
    result = CliRunner().invoke(cli, ["study", "run", "s.yaml"], catch_exceptions=False)
    assert result.exit_code == 2 and "bench.suite.dataset.path" in result.output and "warning" not in result.output
    data = yaml.safe_load((study_with_dataset / "s.yaml").read_text())
    data["budget"]["n_trials"] = "many"
    (study_with_dataset / "s.yaml").write_text(yaml.safe_dump(data))
    result = CliRunner().invoke(cli, ["study", "status", "s.yaml"], catch_exceptions=False)
    assert result.exit_code == 2 and "budget.n_trials" in result.output and "warning" not in result.output


def test_delete_takes_the_study_file_when_its_dataset_is_gone(study_with_dataset):
    def names() -> list[str]:
        listed = CliRunner().invoke(cli, ["study", "list", "-f", "json", "--storage",
                                          f"sqlite:///{study_with_dataset / 'gone.db'}"])
        assert listed.exit_code == 0, listed.output
        return [row["name"] for row in json.loads(listed.stdout)]

    assert "gone" in names()
    result = CliRunner().invoke(cli, ["study", "delete", "s.yaml", "--yes"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "gone" not in names()


def test_a_landscape_study_reads_without_its_table_and_export_spares_a_changed_table(tmp_path, monkeypatch):
    from support.landscapes import table_from_profile, write_table

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TUNER_STORAGE", raising=False)
    write_table(tmp_path / "node.json", table_from_profile("k2.6-tp8-pcie"))
    data = model_study_data("table", seed=2)
    data["server"]["model"] = {"landscape": "node.json", "noise": 0.02, "seed": 2}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(data))
    assert CliRunner().invoke(cli, ["study", "run", "s.yaml"], catch_exceptions=False).exit_code == 0
    (tmp_path / "node.json").write_text("{}")  # changed: the study file no longer loads whole
    # the table is still the study's input, relative path and all: no export writes over it
    result = CliRunner().invoke(cli, ["study", "export", "s.yaml", "--pick", "knee", "-o", "node.json"])
    assert result.exit_code == 2 and "-o: node.json: is the study's landscape table" in result.output
    assert (tmp_path / "node.json").read_text() == "{}"
    (tmp_path / "node.json").unlink()
    result = CliRunner().invoke(cli, ["study", "pareto", "s.yaml", "-f", "json"], catch_exceptions=False)
    assert result.exit_code == 0 and "server.model.landscape" in result.stderr
    assert json.loads(result.stdout)["points"]
