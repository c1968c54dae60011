"""A study against a server that lies, freezes or wedges: every such trial fails with its class, the
run goes on to the next, and no wrong number is kept (not on the front, not exported).

Real processes throughout: `tuner study run` as a process of its own (forked from an interpreter
that imported tuner once, tests/support/zygote.py: a second of imports saved each), the stand-in server
(tests/support/standin_server.py) launched by it in place of the simulator, on free ports of
127.0.0.1, frozen with a real SIGSTOP; real SQLite storage. Each trial's setting picks how its server
misbehaves (``server.env: STANDIN_MODES``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import optuna
import pytest
from support.cli_in_process import tuner_here
from support.processes import gone
from support.standin import standin_python
from support.zygote import TUNER_CLI
from support.zygote import cli_zygote as zygote_of_the_cli

ROOT = Path(__file__).resolve().parents[2]

#: effective setting -> (how its server misbehaves, the class its trial must fail with); None: honest
FAULTS = {
    "1-1-2": (None, None),
    "2-1-3": ("no_spec", "args_mismatch"),          # started without speculation
    "3-1-4": ("no_server_info", "args_unverified"),
    "4-1-5": ("inflate", "bad_response"),           # inflated completion_tokens
    "5-1-6": ("half", "bad_response"),              # half of max_new_tokens
    "6-1-7": ("accept", "bad_response"),            # accept length above num_steps + 1
    "7-1-8": ("freeze", "hung"),                    # SIGSTOP right after /server_info
    "8-1-9": ("wedge", "hung"),                     # answers probes, generates nothing
    "2-2-4": ("wrong_scale", "args_mismatch"),      # sim_speedup other than launched
    "2-2-5": ("no_scale", "args_unverified"),       # a simulator without sim_speedup
    "2-2-3": ("http400", "request_errors"),         # the request's own error is quoted
    "3-2-4": ("bad_scale", "args_unverified"),      # sim_speedup "fast"
    "4-2-8": ("freeze_info", "hung"),               # SIGSTOP when /server_info is asked
    "3-2-6": ("fast", "bad_response"),              # 3.2 x its accept length faster than the baseline
    "2-2-6": ("no_text", "request_errors"),         # honest counts, no text: nothing to check lossless
    "3-2-5": ("other_model", "args_mismatch"),      # /server_info names another model
    "4-2-7": ("respawn", "crash_after_ready"),      # exits 0 mid-suite, a copy answers the rest
}

STUDY = """
name: faults
search_space: {space}
server:
  backend: sim
  python: {python}
  model_path: standin/model
  draft_model_path: standin/draft
  startup_timeout_s: 60
  stop_grace_s: 30
  env: {{STANDIN_MODES: "{modes}"}}
  sim: {{speedup: 20, load_seconds: 0}}
bench:
  suite:
    name: tiny
    prompts: [{{name: fib, text: "def fib(n):"}}, {{name: haiku, text: "autumn leaves"}}]
    single: {{lengths: [16], repeats: 1}}
    sweep: {{concurrencies: [1, 2], max_tokens: 16}}
    warmup: {{requests: 1, max_tokens: 4}}
    timeout_s: 2
objectives: [single_speedup, speedup@2]
default_seed_trials: false
seed_trials: {seeds}
sampler: {{seed: 1}}
budget: {{n_trials: {n}}}
"""

#: The faults in two studies of their own, each with the honest setting first (the front and the
#: export need one) and each with hung servers: they run side by side under xdist, and each still shows
#: the run going on past every kind of fault in turn.
PARTS = {
    "frozen": ["7-1-8", "2-1-3", "3-1-4", "4-1-5", "5-1-6", "6-1-7", "2-2-6", "4-2-7"],
    "wedged": ["8-1-9", "2-2-4", "2-2-5", "2-2-3", "3-2-4", "4-2-8", "3-2-6", "3-2-5"],
}
assert sorted(k for keys in PARTS.values() for k in keys) == sorted(k for k, (m, _) in FAULTS.items() if m)

#: effective setting -> what its failure message must say
MESSAGES = {
    # every answer is checked, the warm-up's too (4 tokens asked)
    "4-1-5": ["6 of 6 answers cannot be true", "completion_tokens 6, exactly 4 asked"],
    "5-1-6": ["completion_tokens 2, exactly 4 asked"],
    "6-1-7": ["outside 1 to num_steps + 1 + 1/spec_verify_ct = 8 (at most"],
    "2-1-3": ["runs without speculative decoding"],
    "2-2-3": ["HTTP 400", "standin refuses 16 tokens"],
    "7-1-8": ["timed out"],
    "4-2-8": ["GET /server_info"],
    "3-2-6": ["no setting runs more than 1.25 x its accept length faster"],
    "2-2-6": ["carries no text"],
    "3-2-5": ["model_path 'other/model'"],
    "4-2-7": ["exit code 0 after it was ready", "another process answered on its port"],
}


def _seeds(keys) -> str:
    out = []
    for key in keys:
        s, k, d = key.split("-")
        out.append(f"{{speculative_num_steps: {s}, speculative_eagle_topk: {k}, speculative_num_draft_tokens: {d}}}")
    return "[" + ", ".join(out) + "]"


def write_study(tmp_path: Path, faults: dict, modes: str | None = None) -> Path:
    modes = modes if modes is not None else ",".join(f"{k}={m}" for k, (m, _) in faults.items() if m)
    p = tmp_path / "faults.yaml"
    p.write_text(STUDY.format(space=ROOT / "search_spaces" / "eagle3.yaml", python=standin_python(tmp_path),
                              modes=modes, seeds=_seeds(faults), n=len(faults)))
    return p


@pytest.fixture(scope="module")
def cli_zygote(tmp_path_factory):
    """`tuner` commands forked from one interpreter that imported the CLI once (support/zygote.py):
    each a process of its own, as ``python -m tuner`` is (its own exit status, stderr, servers)."""
    yield from zygote_of_the_cli(tmp_path_factory)


def tuner(zygote, *args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "TUNER_TEST_KILL_AT"}
    return zygote.run(TUNER_CLI, list(args), env=env, cwd=cwd, timeout=600)


@pytest.mark.parametrize("part", PARTS)
def test_lying_frozen_and_wedged_servers_fail_their_trials_and_the_run_goes_on(tmp_path, part, cli_zygote):
    faults = {key: FAULTS[key] for key in ("1-1-2", *PARTS[part])}
    study = write_study(tmp_path, faults)
    run = tuner(cli_zygote, "study", "run", str(study), cwd=tmp_path)
    out = run.stdout + run.stderr
    assert run.returncode == 0 and "Traceback" not in out, out
    assert "each trial may take up to" in out  # the derived deadline is announced
    # counted by the verdict stored: the too-fast server completed its suite, yet its trial failed
    assert f"done: 1 measured, 0 pruned, {len(faults) - 1} failed" in out, out

    s = optuna.load_study(study_name="faults", storage=f"sqlite:///{tmp_path / 'faults.db'}")
    by_key = {t.user_attrs["effective_key"]: t for t in s.trials}
    assert set(by_key) == set(faults)
    assert all(t.state.name == "COMPLETE" for t in s.trials)  # no crash, no retry queued
    for key, (mode, cls) in faults.items():
        t = by_key[key]
        if cls is None:
            assert t.user_attrs["status"] == "measured", (key, t.user_attrs)
            continue
        assert t.user_attrs["status"] == "failed" and t.user_attrs["failure_class"] == cls, (key, mode, t.user_attrs)
        # no figure of a failed trial is kept; its suite result stays on disk as evidence
        assert "single_tok_per_s" not in t.user_attrs and "speedup@2" not in t.user_attrs, key
        assert all(v <= 0 for v in t.values), key  # worst-case placeholders only
        for said in MESSAGES.get(key, []):
            assert said in t.user_attrs["failure_message"], (key, said, t.user_attrs["failure_message"])
    if "4-1-5" in faults:
        rejected = by_key["4-1-5"].user_attrs["suite_json"]
        assert rejected.endswith("suite.rejected.json")
        assert "rejected by the tuner (bad_response)" in Path(rejected).read_text()

    # the hung servers were killed, their whole groups, and nothing of ours is left running
    assert not list((tmp_path / "faults" / "servers").glob("*.json"))
    hung = [key for key, (_, cls) in faults.items() if cls == "hung"]
    assert hung  # each part has its hung servers
    for key in hung:
        log = Path(by_key[key].user_attrs["log_path"]).read_text()
        assert "# tuner: stopped, killed by SIGKILL" in log, log[-400:]

    # status and export only read the storage: in this process (a Python start-up each saved)
    status = json.loads(tuner_here("study", "status", str(study), "-f", "json", cwd=tmp_path).stdout)
    honest = {by_key[k].number for k, (m, _) in faults.items() if m is None}
    assert set(status["front"]) <= honest and status["front"]
    best = tmp_path / "best.yaml"
    exp = tuner_here("study", "export", str(study), "--pick", "knee", "-o", str(best), cwd=tmp_path)
    assert exp.exit_code == 0, exp.stderr
    assert "\nspeculative-num-steps: 1\n" in best.read_text()  # the only honest setting


@pytest.mark.parametrize("mode, cls", [("freeze", "hung"), ("baseline_spec", "args_mismatch"),
                                       ("no_server_info", "args_unverified")])
def test_a_baseline_that_cannot_be_trusted_stops_the_run_with_one_line(tmp_path, mode, cls, cli_zygote):
    study = write_study(tmp_path, {"1-1-2": (None, None)}, modes=f"baseline={mode}")
    run = tuner(cli_zygote, "study", "run", str(study), cwd=tmp_path)
    assert run.returncode == 1, run.stdout + run.stderr
    errors = [ln for ln in run.stderr.splitlines() if ln.strip()]
    assert len(errors) == 1 and errors[0].startswith(f"error: the autoregressive baseline failed ({cls})"), run.stderr
    s = optuna.load_study(study_name="faults", storage=f"sqlite:///{tmp_path / 'faults.db'}")
    assert all(t.state.name == "WAITING" for t in s.trials)  # nothing measured against a bad baseline
    for rec in (tmp_path / "faults" / "servers").glob("*.json"):
        assert gone(json.loads(rec.read_text())["pid"])
