"""What the input tests of ``tests/cli`` share: a study file with one key changed, a small suite, and
the contract of a refused input (one ``error:`` line, exit 2, nothing written) or an accepted one."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml
from click.testing import CliRunner

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]
DEMO = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
SUITE = {"name": "s", "prompts": [{"name": "a", "text": "hello"}], "single": {"lengths": [8], "repeats": 1},
         "sweep": {"concurrencies": [1, 32], "max_tokens": 8}, "warmup": {"requests": 0}, "timeout_s": 30}


def refused(tmp: Path, args: list[str]) -> str:
    """The one error line of ``tuner ARGS`` (exit 2, nothing added to ``tmp``)."""
    before = sorted(tmp.rglob("*"))
    r = CliRunner().invoke(cli, args)
    lines = r.stderr.strip().splitlines()
    assert r.exit_code == 2, (r.exit_code, r.output)
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in r.output, r.output
    assert sorted(tmp.rglob("*")) == before
    return lines[0]


def accepted(args: list[str]) -> str:
    """The output of ``tuner ARGS``, which must exit 0."""
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 0, r.output
    return r.output


def study_with(tmp: Path, path: str, value, suite: dict | None = None) -> Path:
    """sim-demo.yaml with ``path`` (dotted) set to ``value``, and ``suite`` beside it as suite.yaml."""
    study = copy.deepcopy(DEMO)
    *parents, last = path.split(".")
    at = study
    for key in parents:
        at = at.setdefault(key, {})
    at[last] = value
    if suite is not None:
        study["bench"] = {**study["bench"], "suite": "suite.yaml"}
        (tmp / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False))
    (tmp / "study.yaml").write_text(yaml.safe_dump(study, sort_keys=False))
    return tmp / "study.yaml"
