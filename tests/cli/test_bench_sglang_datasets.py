"""A user coming from SGLang's `bench_serving --dataset-name custom --dataset-path data.jsonl`:
`tuner bench` measures the same file through a suite (`dataset: {path, format: custom}`), and
SGLang's own flags are refused with one line naming that suite, not click's "No such option"
with its usage block (QA)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from support.simproc import running_sim

from tuner.bench import SuiteResult
from tuner.cli import cli

TURNS = [("Explain the difference between a list and a tuple in Python.",
          "A list is mutable while a tuple is immutable, and tuples can be hashed."),
         ("Write a haiku about the sea at night.", "Dark waves fold softly; the moon spills silver on foam.")]


def test_sglang_s_custom_file_is_measured_through_a_suite(tmp_path):
    # as SGLang's custom.py reads it: OpenAI-style turns ("content") or ShareGPT ones ("value")
    (tmp_path / "data.jsonl").write_text(
        json.dumps({"conversations": [{"role": "user", "content": TURNS[0][0]},
                                      {"role": "assistant", "content": TURNS[0][1]}]}) + "\n"
        + json.dumps({"conversation": [{"from": "human", "value": TURNS[1][0]},
                                       {"from": "gpt", "value": TURNS[1][1]}]}) + "\n", encoding="utf-8")
    (tmp_path / "s.json").write_text(json.dumps({
        "name": "custom", "dataset": {"path": "data.jsonl", "format": "custom"},
        "single": {"lengths": [], "repeats": 1}, "sweep": {"concurrencies": [1, 2], "max_tokens": 16},
        "warmup": {"requests": 1, "max_tokens": 4}, "timeout_s": 120}))
    out = tmp_path / "r.json"
    with running_sim("--sim-noise", "0", speedup=50) as sim:
        r = CliRunner().invoke(cli, ["bench", "--url", sim.url, "--suite", str(tmp_path / "s.json"),
                                     "--json", str(out)])
    assert r.exit_code == 0, r.output
    res = SuiteResult.load(out)
    assert res.complete and res.n_failed == 0
    assert [p["text"] for p in res.suite["prompts"]] == [t[0] for t in TURNS]
    assert {r.prompt for r in res.records if r.phase == "sweep"} == {"line1", "line2"}


@pytest.mark.parametrize("argv, use", [
    (["--dataset-name", "custom", "--dataset-path", "data.jsonl"],
     "give --suite FILE.yaml with dataset: {path: DATA.jsonl, format: custom}, SGLang's layout of that name"),
    (["--dataset-path", "data.json"],  # SGLang's default --dataset-name is sharegpt
     "give --suite FILE.yaml with dataset: {path: data.json, format: sharegpt}, SGLang's layout of that "
     "name"),
    (["--dataset-name", "openai"],
     "give --suite FILE.yaml with dataset: {path: DATA.jsonl, format: jsonl} (a messages object per line)"),
    (["--dataset-name", "random"], "the tuner has no generated datasets: give the requests as a suite's "
                                   "prompts or a dataset file (--suite FILE.yaml)"),
], ids=["custom", "path-alone", "openai", "random"])
def test_sglang_s_dataset_flags_are_refused_naming_the_suite_to_use(argv, use):
    r = CliRunner().invoke(cli, ["bench", *argv])  # no --url: refused before anything else
    assert r.exit_code == 2, r.output
    said = (f"error: {argv[0]}: tuner bench draws its requests from a suite, not SGLang's bench_serving "
            f"flags: {use} (README: Workloads from data)")
    assert r.stderr.splitlines() == [said], r.stderr
    assert r.stdout == ""
