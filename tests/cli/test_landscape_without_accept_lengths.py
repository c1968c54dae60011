"""A landscape table whose rows give no ``accept_length`` (a grid measured by a benchmark that does
not record it): ``tuner study create`` of a default-search study on it says once, on stderr, how many
rows lack it, what the search loses, and the fix; it creates the study all the same. ``tuner`` runs
in this process (click's runner: the command's exit code and stderr; the process is not under test)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support.cli_in_process import working_dir
from support.landscapes import table_from_profile

from tuner.cli import cli


@pytest.fixture(scope="module")
def table() -> dict:
    return table_from_profile(concurrency=32)


def _create(folder: Path, data: dict, sampler: str = "auto") -> subprocess.CompletedProcess:
    (folder / "node.json").write_text(json.dumps(data))
    server = {"backend": "model", "model_path": "moonshotai/Kimi-K2.6", "draft_model_path": "sim/kimi-k2.6-eagle3",
              "tp_size": 8, "model": {"seed": 1, "landscape": "node.json"}}
    (folder / "s.yaml").write_text(yaml.safe_dump({
        "name": "noaccept", "search_space": "eagle3", "server": server, "bench": {"suite": "quick"},
        "sampler": {"name": sampler, "seed": 1}, "budget": {"n_trials": 2}}, sort_keys=False))
    with working_dir(folder):
        r = CliRunner().invoke(cli, ["study", "create", "s.yaml", "--storage", "sqlite:///s.db"],
                               catch_exceptions=False)
    return subprocess.CompletedProcess([], r.exit_code, r.stdout, r.stderr)


def _strip(data: dict, every: int) -> tuple[dict, int]:
    """``data`` with the accept length of every ``every``-th row removed, and how many rows that is."""
    out = json.loads(json.dumps(data))
    stripped = 0
    for i, row in enumerate(out["configs"]):
        if i % every == 0 and "accept_length" in row:
            del row["accept_length"]
            stripped += 1
    return out, stripped


def _warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if "accept_length" in line]


@pytest.mark.parametrize("every", [1, 2])
def test_rows_without_accept_lengths_warn_once_with_the_count_the_loss_and_the_fix(tmp_path, table, every):
    data, stripped = _strip(table, every)
    measured = sum("failure" not in row for row in data["configs"])
    r = _create(tmp_path, data)
    assert r.returncode == 0, (r.stdout, r.stderr)
    lines = _warnings(r.stderr)
    assert len(lines) == 1, r.stderr
    line = lines[0]
    assert line.startswith("warning: s.yaml: server.model.landscape ") and "node.json" in line, line
    counted = f"all {measured} measured rows" if stripped == measured else f"{stripped} of its {measured} measured rows"
    assert counted in line, line
    assert "spec_accept_length" in line and "completion_tokens / spec_verify_ct" in line, line
    assert "%" in line, line  # the measured figure of what the search loses
    assert "ready in" in r.stdout  # a warning: the study is created all the same


def test_a_table_with_every_accept_length_or_a_sampler_that_never_reads_them_says_nothing(tmp_path, table):
    r = _create(tmp_path, table)
    assert r.returncode == 0 and _warnings(r.stderr) == [], r.stderr
    (tmp_path / "s.db").unlink()
    r = _create(tmp_path, _strip(table, 1)[0], sampler="random")
    assert r.returncode == 0 and _warnings(r.stderr) == [], r.stderr
