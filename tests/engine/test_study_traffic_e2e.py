"""Whole studies on the simulated server, as a user runs them (`tuner study run` a process of its own,
forked from an interpreter that imported tuner once, tests/support/zygote.py; real processes, real
HTTP): a JSONL dataset and a ShareGPT file, through /generate and through chat, with latency SLOs and
the lossless check; then `tuner study confirm` and status."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.cli_in_process import tuner_here
from support.zygote import TUNER_CLI
from support.zygote import cli_zygote as zygote_of_the_cli

from tuner.config.study import load_study
from tuner.engine.baseline import find_baseline
from tuner.engine.records import MEASURED, load_records
from tuner.engine.study import open_study

ROOT = Path(__file__).resolve().parents[2]
DATASETS = ROOT / "tuner" / "config" / "datasets"

STUDY = """
name: {name}
search_space: {space}
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  startup_timeout_s: 60
  stop_grace_s: 5
  # speedup 5, not 100: chat answers carry no e2e_latency, so a request's wall time is its latency, and
  # one 8-token request takes ~5 ms wall at 100x: a loaded machine's ~20 ms of scheduling delay read
  # the baseline 4x slow (CI: speedup@1 7.86x, the trial failed as bad_response, nothing measured)
  sim: {{profile: k2.6-tp8-pcie, speedup: 5, load_seconds: 0.2, noise: 0.01, seed: 1}}
bench:
  api: {api}
  stream: {stream}
  suite:
    name: data
    dataset: {{path: {dataset}, n: 4, seed: 3, max_output_tokens: 48}}
    single: {{prompts: 2, repeats: 1}}
    sweep: {{concurrencies: [1, 4]}}
    warmup: {{requests: 1, max_tokens: 4}}
    timeout_s: 30
slo:
  - {{concurrency: 4, e2e_p99_ms: 600000{ttft}}}
sampler: {{seed: 3}}
default_seed_trials: false
seed_trials:
  - {{speculative_num_steps: 3, speculative_eagle_topk: 1, speculative_num_draft_tokens: 4}}
objectives: [single_speedup, speedup@4]
budget: {{n_trials: 1}}
"""


@pytest.fixture(scope="module")
def cli_zygote(tmp_path_factory):
    """`tuner` commands forked from one interpreter that imported the CLI once (support/zygote.py):
    each a process of its own, as ``python -m tuner`` is, its servers real simulator processes."""
    yield from zygote_of_the_cli(tmp_path_factory)


def tuner(zygote, *args, cwd, timeout=300):
    env = {k: v for k, v in os.environ.items() if k != "TUNER_TEST_KILL_AT"}
    return zygote.run(TUNER_CLI, list(args), env=env, cwd=cwd, timeout=timeout)


@pytest.mark.parametrize("dataset, api, stream", [
    ("mixed.jsonl", "generate", False),
    ("mixed.jsonl", "chat", True),
    ("sharegpt-mini.json", "generate", True),
    ("sharegpt-mini.json", "chat", False),
])
def test_dataset_studies_through_generate_and_chat(tmp_path, dataset, api, stream, cli_zygote):
    name = f"traffic-{api}-{Path(dataset).stem}"
    path = tmp_path / f"{name}.yaml"
    path.write_text(STUDY.format(name=name, space=ROOT / "search_spaces" / "eagle3.yaml", api=api,
                                 stream=str(stream).lower(), dataset=DATASETS / dataset,
                                 ttft=", ttft_p99_ms: 600000" if stream else ""))
    r = tuner(cli_zygote, "study", "run", str(path), cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    config = load_study(path)
    study = open_study(config.name, config.storage)
    every = load_records(study)
    records = [t for t in every if t.status == MEASURED]
    assert len(records) == 1, [(t.number, t.state, t.status, t.attrs.get("failure_message")) for t in every]
    suite = json.loads(Path(records[0].attrs["suite_json"]).read_text())
    sent = {(rec["prompt"], rec["max_tokens"]) for rec in suite["records"] if rec["phase"] == "sweep"}
    drawn = {(p["name"], p["max_tokens"]) for p in suite["suite"]["prompts"]}
    assert sent == drawn and len(drawn) == 4  # every drawn request, each at its own length
    assert suite["api"] == api and suite["suite"]["dataset"]["sha256"]
    base = find_baseline(study).attrs
    for t in records:
        assert t.attrs["accept_length"] > 1.0  # read from meta_info (/generate) or sglext (chat)
        assert t.attrs["lossless_share"] == 1.0  # the simulator's greedy output never changes
        assert t.attrs["slo_checks"] and all(c["ok"] for c in t.attrs["slo_checks"])
        assert t.feasible
    assert base["slo_checks"][0]["ok"] and len(base["single_outputs"]) == 2
    assert study.user_attrs["tuner_workload"]["requests"] == 4

    # status and export only read the storage: in this process (a Python start-up each saved)
    status = tuner_here("study", "status", str(path))
    assert status.exit_code == 0, status.stderr
    assert f"workload: suite data: dataset {DATASETS / dataset}" in status.stdout
    flat = " ".join(status.stdout.split())  # the workload line is wrapped where the terminal's width ends
    assert f"api {api}" in flat and "slo at C=4: e2e_p99_ms 600000" in status.stdout
    assert "100%" in status.stdout  # the lossless column

    if (dataset, api) == ("sharegpt-mini.json", "chat"):
        r = tuner(cli_zygote, "study", "confirm", str(path), "--picks", "throughput", "--repeats", "2", "--near", "0",
                  cwd=tmp_path)
        assert r.returncode == 0, r.stderr[-2000:]
        assert "confirmation" in r.stdout and "throughput: trial" in r.stdout
        out = tmp_path / "best.yaml"
        r = tuner_here("study", "export", str(path), "--pick", "throughput", "-o", str(out))
        assert r.exit_code == 0, r.stderr
        text = out.read_text()
        assert "# confirmed: run" in text and "2 rounds interleaved" in text
        assert "# workload: suite data: dataset" in text and "api chat" in text
        assert "# lossless check: 2/2 single-request outputs identical" in text
        assert len(open_study(config.name + ".confirm", config.storage, companions=True).trials) == 4
