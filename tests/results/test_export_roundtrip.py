"""Round trip: a trial measured on the simulated SGLang server, exported with `tuner study export`,
and the exported YAML given back to the simulator with `--config`: the server it starts resolves
the same arguments in `/server_info` as the server the trial measured. The study gives its context
length as SGLang's human_readable_int takes it (`64k`): the YAML keeps the text, SGLang's loader reads
64000, as the measured server did."""

import json
import urllib.request
from pathlib import Path

import yaml
from click.testing import CliRunner
from support.simproc import running_sim

from tuner.cli import cli
from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import ServerBackend
from tuner.engine.records import load_records
from tuner.engine.runner import run_study
from tuner.engine.study import config_from_study, create_study, open_study

ROOT = Path(__file__).resolve().parents[2]

# A tiny suite and a high simulator speedup: one baseline and one trial take a few seconds. (Not
# higher: at 2000x a loaded machine's own overhead outweighs what the model times, and the measured
# speedup of the trial, which the adaptive export needs above 1, becomes noise.)
STUDY = f"""
name: roundtrip
search_space: {ROOT / "search_spaces" / "eagle3.yaml"}
server:
  backend: sim
  model_path: sim/kimi-k2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  startup_timeout_s: 30
  stop_grace_s: 5
  args: {{mem_fraction_static: 0.85, trust_remote_code: true, context_length: 64k}}
  sim: {{speedup: 200, load_seconds: 0, noise: 0.0, seed: 1}}
bench:
  suite:
    name: tiny
    prompts: [{{name: fib, text: "Write a Python function that returns the n-th Fibonacci number."}}]
    single: {{lengths: [32], repeats: 1}}
    sweep: {{concurrencies: [1, 4], max_tokens: 32}}
    warmup: {{requests: 1, max_tokens: 4}}
    timeout_s: 30
    temperature: 0.0
    ignore_eos: true
objectives: [single_speedup, speedup@4]
budget: {{n_trials: 1}}
"""

#: Per-launch facts, not configuration: where it listened, when it started, how the simulator ran.
# launch_command is how the server was asked for, not its configuration (SGLang 0.5.23's
# server_info docstring); sim_running_requests is live state.
NOT_CONFIG = {"host", "port", "startup_time", "sim_speedup", "sim_profile", "launch_command",
              "sim_running_requests"}


def _server_info(url: str) -> dict:
    with urllib.request.urlopen(url + "/server_info", timeout=10) as resp:
        return json.loads(resp.read())


def test_exported_yaml_restarts_the_measured_server(tmp_path):
    path = tmp_path / "roundtrip.yaml"
    path.write_text(STUDY)
    config = load_study(path)
    create_study(config, config.storage)
    stored, space, suite = config_from_study(open_study(config.name, config.storage), config.workdir)
    backend = ServerBackend(stored, space.config.fixed, load_suite(suite), algorithm=space.config.algorithm,
                            attention=space.attention)
    run_study(stored, config.storage, backend, n_trials=1)
    trial = load_records(open_study(config.name, config.storage))[0]
    assert trial.status == "measured", (trial.failure_class, trial.attrs.get("failure_message"))
    measured_args = trial.attrs["server_args"]

    out = tmp_path / "best.yaml"
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", str(trial.number), "-o", str(out)])
    assert r.exit_code == 0, r.output
    mapping = yaml.safe_load(out.read_text())
    assert mapping["model-path"] == "sim/kimi-k2.6"
    assert mapping["context-length"] == "64k" and measured_args["context_length"] == 64000
    assert "WARNING" not in out.read_text(), out.read_text()  # 64k is what the server ran: no mismatch

    # simproc fills in a default --model-path unless one is given: give the YAML's own value
    with running_sim("--config", str(out), "--model-path", mapping["model-path"], speedup=2000) as sim:
        info = _server_info(sim.url)
    for key, value in measured_args.items():
        if key not in NOT_CONFIG:
            assert info.get(key) == value, f"{key}: trial ran {value!r}, --config {out.name} gives {info.get(key)!r}"
    state = info["internal_states"][0]
    eff = trial.effective
    assert (state["speculative_num_steps"], state["speculative_eagle_topk"], state["speculative_num_draft_tokens"]) \
        == (eff.num_steps, eff.eagle_topk, eff.num_draft_tokens)

    # The same trial with the adaptive policy: the YAML points at the JSON, and the server accepts
    # both (SGLang's checks: topk 1, num_steps among the policy's candidate steps).
    adaptive_yaml, policy = tmp_path / "adaptive.yaml", tmp_path / "policy.json"
    r = CliRunner().invoke(cli, ["study", "export", str(path), "--pick", str(trial.number), "-o", str(adaptive_yaml),
                                 "--adaptive-out", str(policy)])
    assert r.exit_code == 0, r.output
    mapping = yaml.safe_load(adaptive_yaml.read_text())
    assert mapping["speculative-adaptive"] is True
    with running_sim("--config", str(adaptive_yaml), "--model-path", mapping["model-path"], speedup=2000) as sim:
        info = _server_info(sim.url)
    assert info["speculative_adaptive"] is True
    assert info["speculative_num_steps"] == eff.num_steps
