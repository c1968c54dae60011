"""Smaller command-line fixes, each through the real command: bench --stream prints ITL and units,
space check with no flags, launch --print with port 0, unwritable -o / --png / --workdir."""

import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support.model_study import make_model_study
from support.prepared_once import prepared_once
from support.simproc import running_sim

from tuner.cli import cli

ROOT = Path(__file__).resolve().parents[2]
SPACE = ROOT / "search_spaces" / "eagle3.yaml"


def invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args])


def study_copy(tmp_path_factory, n_trials: int | None) -> Path:
    """A copy, in a folder of its own, of the model study ``w.yaml`` with its storage beside it:
    created (``n_trials=None``) or run for ``n_trials``; each is built once per session
    (tests/support/prepared_once.py), not once per parametrized case, which only reads it."""
    name = "w-created" if n_trials is None else f"w-ran-{n_trials}"
    return prepared_once(tmp_path_factory, name, lambda folder: make_model_study(folder, "w", n_trials=n_trials)) \
        / "w.yaml"


def test_bench_stream_prints_ttft_and_itl_with_units(tmp_path):
    suite = tmp_path / "s.yaml"
    suite.write_text(yaml.safe_dump({
        "name": "tiny", "prompts": [{"name": "fib", "text": "Write a Python function for Fibonacci."}],
        "single": {"lengths": [24], "repeats": 1}, "sweep": {"concurrencies": [1, 4], "max_tokens": 24},
        "warmup": {"requests": 1, "max_tokens": 4}, "timeout_s": 60}))
    with running_sim("--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "sim/draft",
                     "--speculative-num-steps", "1", "--speculative-eagle-topk", "1",
                     "--speculative-num-draft-tokens", "2", speedup=2) as sim:
        # (speedup 2: a token every ~20 ms of wall time; at 50x a client held off the CPU for a
        # millisecond read a whole answer at once, and rightly left its ITL unmeasured)
        r = invoke("bench", "--url", sim.url, "--suite", suite, "--stream")
    assert r.exit_code == 0, r.output
    header = next(line for line in r.output.splitlines() if "ITL p50 ms" in line)
    for col in ("TTFT p50 ms", "TTFT p99 ms", "ITL p50 ms", "ITL p99 ms"):
        assert col in header
    assert "TTFT ms" in r.output  # the single-request table's column
    row = next(line for line in r.output.splitlines() if re.match(r"\W*4\W", line))
    assert len(re.findall(r"\d+\.\d+", row)) >= 8  # agg, req tok/s, p50, p99, TTFT x2, ITL x2: all filled


def test_space_check_with_no_flags_names_sglangs_choice(tmp_path):
    r = invoke("space", "check", SPACE)
    assert r.exit_code == 0 and r.output == "valid: no flags given, SGLang chooses steps=3 topk=1 draft=4 itself\n"
    small = tmp_path / "small.yaml"
    small.write_text(SPACE.read_text().replace("{low: 1, high: 8}", "{low: 4, high: 8}"))
    r = invoke("space", "check", small)
    assert "note: SGLang's own choice steps=3 topk=1 draft=4 lies outside the ranges" in r.output
    r = invoke("space", "check", small, "--num-steps", 2, "--topk", 1, "--draft-tokens", 3)
    assert "note: steps=2 topk=1 draft=3 lies outside the ranges" in r.output


def test_launch_print_with_port_0_says_the_port_is_only_an_example(tmp_path):
    r = CliRunner().invoke(cli, ["launch", str(ROOT / "studies" / "sim-demo.yaml"), "--print"])
    assert r.exit_code == 0
    port = re.search(r"--port (\d+)", r.stdout).group(1)
    assert port != "0" and f"port {port} was free just now" in r.stderr and "--port P" in r.stderr
    r = CliRunner().invoke(cli, ["launch", str(ROOT / "studies" / "sim-demo.yaml"), "--print", "--port", "31234"])
    assert "--port 31234" in r.stdout and "was free just now" not in r.stderr
    # stderr states the attention backend and why (issue 15): the K2.6 profile is MLA on Hopper
    assert r.stderr.startswith("note: attention backend fa3 (pinned; runs trees)")
    data = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    data["server"]["env"] = {"HF_TOKEN": "s3cret", "MY_VAR": "x"}
    data["search_space"] = str(ROOT / "search_spaces" / "eagle3.yaml")
    envy = tmp_path / "envy.yaml"
    envy.write_text(yaml.safe_dump(data))
    r = CliRunner().invoke(cli, ["launch", str(envy), "--print"])
    assert r.exit_code == 0 and "server.env's HF_TOKEN, MY_VAR" in r.stderr and "s3cret" not in r.output
    for port in ("70000", "-5"):  # QA: a traceback from bind(), or a command with that port
        r = CliRunner().invoke(cli, ["launch", str(ROOT / "studies" / "sim-demo.yaml"), "--print", "--port", port])
        assert r.exit_code == 2 and "--port" in r.output and "--port " + port not in r.stdout


@pytest.mark.parametrize("args", [
    ["study", "report", "STUDY", "-o", "NOTADIR/r.html"],
    ["study", "report", "STUDY", "-o", "/proc/tuner-report.html"],
    ["study", "report", "STUDY", "-o", "OK.html", "--png", "NOTADIR/png"],
    ["study", "run", "STUDY", "--workdir", "NOTADIR/wd"],
    ["study", "run", "STUDY", "--workdir", "/proc/tuner-wd"],
])
def test_unwritable_outputs_are_one_line_and_nothing_written(tmp_path_factory, args):
    study = study_copy(tmp_path_factory, None)
    tmp_path = study.parent  # the copy's own folder
    (tmp_path / "NOTADIR").write_text("a file, not a folder")
    before = sorted(p.name for p in tmp_path.iterdir())
    db = (tmp_path / "w.db").read_bytes()
    args = [a.replace("STUDY", str(study)).replace("NOTADIR", str(tmp_path / "NOTADIR"))
            .replace("OK.html", str(tmp_path / "ok.html")) for a in args]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2, r.output
    assert "Traceback" not in r.output and len(r.output.strip().splitlines()) == 1, r.output
    flag = [a for a in args if a.startswith("-")][-1]  # the bad one is the last flag given
    assert r.output.startswith(f"error: {flag}") or f"{flag}:" in r.output, r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before and (tmp_path / "w.db").read_bytes() == db


@pytest.mark.parametrize("args", [
    ["study", "report", "STUDY", "-o", "NOSUCH/deeper/r.html"],
    ["study", "compare", "STUDY", "STUDY", "-o", "NOSUCH/c.html"],
    ["study", "export", "STUDY", "--pick", "0", "-o", "NOSUCH/best.yaml"],
    ["study", "report", "STUDY", "-o", "OK.html", "--png", "NOSUCH/png"],
    # (no server is reached: the output is checked first)
    ["bench", "--url", "http://127.0.0.1:9", "--json", "NOSUCH/r.json"],
    ["sim", "landscape", "--table", "NOSUCH/t.json"],
])
def test_an_output_in_a_missing_folder_is_refused_alike_and_no_folder_is_made(tmp_path_factory, args):
    # QA: report -o and compare -o made the missing folders (a typo grew a tree of them) while
    # export -o refused; every output now refuses, naming the flag and the folder to create
    study = study_copy(tmp_path_factory, 1)
    tmp_path = study.parent  # the copy's own folder
    before = sorted(p.name for p in tmp_path.iterdir())
    args = [a.replace("STUDY", str(study)).replace("NOSUCH", str(tmp_path / "nosuch"))
            .replace("OK.html", str(tmp_path / "ok.html")) for a in args]
    r = CliRunner().invoke(cli, args)
    flag = [a for a in args if a.startswith("-")][-1]
    missing = tmp_path / "nosuch"
    said = f"error: {flag}: {args[-1]}: folder {Path(args[-1]).parent} does not exist; create it first"
    assert r.exit_code == 2 and r.output.strip().splitlines() == [said], r.output
    assert sorted(p.name for p in tmp_path.iterdir()) == before and not missing.exists()


@pytest.mark.parametrize("args", [
    ["study", "export", "STUDY", "--pick", "knee", "-o", "ADIR"],
    ["study", "export", "STUDY", "--adaptive", "--adaptive-out", "ADIR"],
    ["study", "report", "STUDY", "-o", "ADIR"],
    ["study", "run", "STUDY", "--n-trials", "0"],
    # QA: 10**18 was taken, as budget.n_trials was (a dry run: before the bound, it launched nothing)
    ["study", "run", "STUDY", "--dry-run", "--n-trials", "100001"],
    ["study", "run", "STUDY", "--dry-run", "--add-trials", "100001"],
])
def test_a_value_click_refuses_is_one_line_naming_the_option(tmp_path_factory, args):
    # (QA: -o naming a folder printed click's usage block, then the error four lines down)
    study = study_copy(tmp_path_factory, None)
    tmp_path = study.parent  # the copy's own folder
    (tmp_path / "ADIR").mkdir()
    args = [a.replace("STUDY", str(study)).replace("ADIR", str(tmp_path / "ADIR")) for a in args]
    r = CliRunner().invoke(cli, args)
    assert r.exit_code == 2 and "Usage:" not in r.output and len(r.output.strip().splitlines()) == 1, r.output
    flag = [a for a in args if a.startswith("-")][-1]
    assert r.output.startswith("error: Invalid value for ") and flag in r.output, r.output
