"""`tuner study confirm --json`: stdout is the JSON alone, the progress lines go to stderr, also when
the confirmation completes fewer than two rounds (exit 1). In-process on a ``backend: model`` study.

QA (qa192): `tuner study confirm s.yaml --json | jq` read `[0m00s] baseline (autoregressive):
launching` and the other progress lines before the JSON, and failed to parse it; with every launch
failed, stdout held the table instead of JSON.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.model_study import one_launch_study
from support.prepared_once import prepared_once

from tuner.cli import cli


def _build(folder):
    path = folder / "s.yaml"
    path.write_text(one_launch_study("js"))
    r = CliRunner().invoke(cli, ["study", "run", str(path)])
    assert r.exit_code == 0, r.output


@pytest.fixture
def study(tmp_path_factory):
    """The study, run once per session (whichever xdist worker asks first); each test confirms in a
    copy of its own, as when each ran it."""
    return prepared_once(tmp_path_factory, "confirm-json", _build) / "s.yaml"


def test_confirm_json_prints_only_json_on_stdout(study):
    r = CliRunner().invoke(cli, ["study", "confirm", str(study), "--picks", "0", "--repeats", "2", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["rounds"] == 2 and [c["trial"] for c in data["candidates"]] == [0]
    assert "round 2: trial 0: measured" in r.stderr and "round" not in r.stdout.replace('"rounds"', "")


def test_confirm_json_of_a_run_with_no_round_is_json_and_exit_1(study, monkeypatch):
    from tuner.engine.model_backend import ModelBackend

    monkeypatch.setattr(ModelBackend, "launch_failure", lambda self, spec: ("oom", "out of memory"))
    r = CliRunner().invoke(cli, ["study", "confirm", str(study), "--picks", "0", "--repeats", "2", "--json"])
    assert r.exit_code == 1, r.output
    data = json.loads(r.stdout)
    assert data["rounds"] == 0 and data["picks"] == {} and data["failed"] == 4
    assert "completed 0 rounds of 2" in r.stderr
