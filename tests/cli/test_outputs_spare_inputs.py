"""No command writes its output over a file the study (or the command itself) reads: `export`,
`report` and `compare` refuse an -o that is the study's suite file, a prompt file or dataset of its
suite, its landscape table or its profile file; `sim landscape --table` refuses its own --space,
--suite and --profile files. Each is one line naming the flag and the file, exit 2, and the file
left byte for byte as it was (QA: `export -o suite.yaml`, `report -o node.json` and
`sim landscape --table eagle3.yaml` each destroyed a file the study needs, exit 0)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support.landscapes import SPACE, table_from_profile, write_table

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]
QUICK = ROOT / "tuner" / "config" / "suites" / "quick.yaml"
PROFILE = ROOT / "tuner" / "sim" / "profiles" / "k2.6-tp8-pcie.yaml"



def study(name: str, suite, model: dict) -> str:
    """A study file on the performance model; a budget of one launch: each command here is refused
    before it reads a trial, and one measured trial is something to write (the QA's exit 0)."""
    return yaml.safe_dump({
        "name": name, "search_space": str(SPACE),
        "server": {"backend": "model", "model_path": "moonshotai/Kimi-K2.6",
                   "draft_model_path": "sim/kimi-k2.6-eagle3", "tp_size": 8, "model": model},
        "bench": {"suite": suite}, "sampler": {"seed": 1}, "budget": {"n_trials": 1}})


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """Two measured studies: one on a landscape table with a suite file, one on a profile file with
    an inline suite whose prompt is a file."""
    folder = tmp_path_factory.mktemp("spare")
    write_table(folder / "node.json", table_from_profile(load_s=900))
    shutil.copy(QUICK, folder / "suite.yaml")
    (folder / "table.yaml").write_text(study("table", "suite.yaml", {"landscape": "node.json", "seed": 4}))
    shutil.copy(PROFILE, folder / "profile.yaml")
    (folder / "prompt.txt").write_text("Write a haiku about autumn leaves falling in the rain.\n")
    inline = yaml.safe_load(QUICK.read_text())
    inline["prompts"] = [{"name": "p", "file": "prompt.txt"}]
    (folder / "prof.yaml").write_text(study("prof", inline, {"profile": "profile.yaml", "seed": 4}))
    for name in ("table", "prof"):
        r = invoke("study", "run", folder / f"{name}.yaml")
        assert r.exit_code == 0, r.output
    return folder


def _refused(folder: Path, name: str, args: list, flag: str):
    before = (folder / name).read_bytes()
    r = invoke(*args)
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.output, r.output
    pattern = rf"error: {re.escape(flag)}: .*{re.escape(name)}: is (the|a) .*: writing there would destroy it"
    assert re.search(pattern, lines[0]), lines[0]
    assert (folder / name).read_bytes() == before


@pytest.mark.parametrize("study,victim", [("table", "suite.yaml"), ("table", "node.json"),
                                          ("prof", "profile.yaml"), ("prof", "prompt.txt")])
def test_export_report_compare_spare_the_studys_files(folder, study, victim):
    target = folder / f"{study}.yaml"
    out = folder / victim
    export = ["study", "export", target, "--pick", "single", "--format", "json", "-o", out]
    _refused(folder, victim, export, "-o")
    _refused(folder, victim, ["study", "report", target, "-o", out], "-o")
    compare = ["study", "compare", folder / "table.yaml", folder / "prof.yaml", "-o", out]
    _refused(folder, victim, compare, "-o")


def test_export_adaptive_out_spares_the_suite(folder):
    _refused(folder, "suite.yaml", ["study", "export", folder / "table.yaml", "-o", folder / "best.yaml",
                                    "--adaptive-out", folder / "suite.yaml"], "--adaptive-out")
    assert not (folder / "best.yaml").exists()


@pytest.mark.parametrize("victim,flag", [("suite.yaml", "--suite"), ("space.yaml", "--space"),
                                         ("profile.yaml", "--profile")])
def test_landscape_table_spares_its_inputs(victim, flag, tmp_path):
    shutil.copy(QUICK, tmp_path / "suite.yaml")
    shutil.copy(PROFILE, tmp_path / "profile.yaml")
    shutil.copy(SPACE, tmp_path / "space.yaml")
    args = ["sim", "landscape", "--space", tmp_path / "space.yaml", "--suite", tmp_path / "suite.yaml",
            "--profile", tmp_path / "profile.yaml", "--concurrency", "1,32", "--table", tmp_path / victim]
    _refused(tmp_path, victim, args, "--table")


def test_export_and_report_spare_a_shipped_suite_s_own_file(tmp_path):
    """A study on a shipped suite (`suite: quick`) reads the package's quick.yaml: an -o there is
    refused too (QA: `tuner bench --json` wrote over it, and the study commands would have)."""
    (tmp_path / "ship.yaml").write_text(study("ship", "quick", {"profile": "k2.6-tp8-pcie", "seed": 4}))
    r = invoke("study", "run", tmp_path / "ship.yaml")
    assert r.exit_code == 0, r.output
    before = QUICK.read_bytes()
    try:
        for args in (["study", "export", tmp_path / "ship.yaml", "--pick", "single", "--format", "json"],
                     ["study", "report", tmp_path / "ship.yaml"]):
            r = invoke(*args, "-o", QUICK)
            assert r.exit_code == 2 and "is the study's suite file: writing there would destroy it" in r.output, \
                r.output
            assert QUICK.read_bytes() == before
    finally:
        # never leave the package's suite broken; never write it when it is whole: other tests read it
        # at the same time, and a rewrite is briefly an empty file (CI: "quick.yaml: name: required key")
        if QUICK.read_bytes() != before:
            QUICK.write_bytes(before)
