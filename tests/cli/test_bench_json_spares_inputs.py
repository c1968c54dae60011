"""`tuner bench --json FILE` refuses a FILE that is the command's own input -- its --suite file, a
prompt file of that suite, or the --compare result (a measurement the new one would replace) -- and
`--json -`, before any request is sent: one line naming --json, exit 2, the file untouched (QA: each was
written over, or a file named `-` was made, exit 0)."""

from __future__ import annotations

import os

import pytest
import yaml
from click.testing import CliRunner
from support.simproc import running_sim

from tuner.bench import SuiteResult
from tuner.cli import cli


@pytest.fixture(scope="module")
def server():
    """A live server: without the check, the suite runs and the file is written over."""
    with running_sim(speedup=50) as sim:
        yield sim.url


@pytest.mark.parametrize("victim", ["suite.yaml", "prompt.txt", "base.json", "-"])
def test_json_is_not_an_input(server, tmp_path, monkeypatch, victim):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "prompt.txt").write_text("hello\n")
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump({
        "name": "s", "prompts": [{"name": "a", "file": "prompt.txt"}], "single": {"lengths": [8], "repeats": 1},
        "sweep": {"concurrencies": [1], "max_tokens": 8}, "warmup": {"requests": 0}, "timeout_s": 30}))
    SuiteResult(suite={"name": "s"}).save(tmp_path / "base.json")  # a saved result, as --json writes
    before = {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)}
    r = CliRunner().invoke(cli, ["bench", "--url", server, "--suite", "suite.yaml",
                                 "--compare", "base.json", "--json", victim], catch_exceptions=False)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: --json: {victim}: "), r.output
    # `tuner bench` has no study: its files are the --suite file's (QA: "of the study's suite")
    assert "study" not in lines[0], r.output
    assert {name: (tmp_path / name).read_bytes() for name in os.listdir(tmp_path)} == before
