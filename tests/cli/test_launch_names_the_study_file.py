"""`tuner launch` names the study file in a line a lower layer words as ``study: KEY: ...``, as
`tuner study run` names it.

A find of a fuzz (qa138, hypothesis: a byte-level cut of the sim-traffic study): a study of the
simulated server without ``server.draft_model_path`` made `launch --print` say ``error: study:
server.draft_model_path: required for EAGLE3 trials: ...``, naming no file; `study run --dry-run`
of the same file names it."""

from __future__ import annotations

import copy

import yaml
from click.testing import CliRunner
from support.cli_inputs import DEMO

from tuner.cli import cli


def _study_without_draft(tmp_path):
    study = copy.deepcopy(DEMO)
    del study["server"]["draft_model_path"]
    path = tmp_path / "nodraft.yaml"
    path.write_text(yaml.safe_dump(study, sort_keys=False))
    return path


def test_launch_print_names_the_study_file_of_a_missing_draft_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = _study_without_draft(tmp_path)
    r = CliRunner().invoke(cli, ["launch", "--print", "--port", "4000", "nodraft.yaml"])
    assert r.exit_code == 2 and r.stdout == "", (r.exit_code, r.output)
    assert r.stderr.splitlines() == ["error: nodraft.yaml: server.draft_model_path: required for EAGLE3 "
                                     "trials: the path of the draft model"], r.stderr
    # study run names it alike
    dry = CliRunner().invoke(cli, ["study", "run", "--dry-run", "nodraft.yaml"])
    assert dry.exit_code == 2 and "error: nodraft.yaml: server.draft_model_path: " in dry.stderr, dry.output
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]


def test_launch_print_of_the_baseline_needs_no_draft_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _study_without_draft(tmp_path)
    r = CliRunner().invoke(cli, ["launch", "--print", "--baseline", "--port", "4000", "nodraft.yaml"])
    assert r.exit_code == 0 and "-m tuner.sim " in r.stdout and "--speculative" not in r.stdout, r.output
