"""A whole study as a user runs it: `tuner study run` on the simulated server (real processes, real
HTTP on 127.0.0.1, real SQLite storage), killed with `kill -9` mid-trial, then run again. Both runs
are processes of their own forked from one interpreter that imported tuner once (support/zygote.py,
support/forked_tuner.py): a second of imports saved each."""

import json
import os
import signal
from pathlib import Path

import optuna
import pytest
from support.cli_in_process import tuner_here
from support.faults import wait_for
from support.forked_tuner import start_forked
from support.zygote import TUNER_CLI
from support.zygote import cli_zygote as zygote_of_the_cli

ROOT = Path(__file__).resolve().parents[2]
#: Enough for the killed trial, its retry and a trial either side of it; each launch costs about a second.
BUDGET = 4

STUDY = f"""
name: e2e
search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  startup_timeout_s: 60
  stop_grace_s: 5
  sim: {{profile: k2.6-tp8-pcie, speedup: 100, load_seconds: 0.3, noise: 0.01, seed: 1}}
bench:
  suite:
    name: e2e
    prompts:
      - {{name: fib, text: "Write a Python function that returns the n-th Fibonacci number."}}
      - {{name: haiku, text: "Write a haiku about autumn leaves falling in the rain."}}
    single: {{lengths: [64], repeats: 1}}
    sweep: {{concurrencies: [1, 32], max_tokens: 32}}
    warmup: {{requests: 1, max_tokens: 4}}
    timeout_s: 30
sampler: {{seed: 3}}
budget: {{n_trials: {BUDGET}}}
"""


@pytest.fixture(scope="module")
def cli_zygote(tmp_path_factory):
    yield from zygote_of_the_cli(tmp_path_factory)


def tuner(zygote, *args, cwd, timeout=240):
    """``tuner ARGS`` forked from ``zygote`` with this suite's environment, run to its end."""
    return zygote.run(TUNER_CLI, list(args), env=cli_env(), cwd=cwd, timeout=timeout)


def cli_env() -> dict:
    """This suite's environment less ``TUNER_TEST_KILL_AT``, as the zygote imported the CLI with."""
    return {k: v for k, v in os.environ.items() if k != "TUNER_TEST_KILL_AT"}


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def server_records(workdir: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((workdir / "servers").glob("*.json"))]


@pytest.fixture
def study_file(tmp_path):
    p = tmp_path / "e2e.yaml"
    p.write_text(STUDY)
    return p


def test_study_survives_kill_9_mid_trial(study_file, tmp_path, cli_zygote):
    workdir = tmp_path / "e2e"
    first = start_forked(cli_zygote, ["study", "run", str(study_file)], cli_env(), tmp_path,
                         tmp_path / "first.log")
    try:
        # Mid-trial: the baseline is done and a trial's server is up (its record is on disk).
        def trial_server():
            recs = [r for r in server_records(workdir) if "--speculative-algorithm" in " ".join(r.get("cmdline", []))]
            return recs[0] if recs else None

        rec = wait_for(trial_server, 120, "a trial's server")
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
    server = rec["pid"]
    # PR_SET_PDEATHSIG: the kernel kills the server with its tuner (it used to run on, an orphan,
    # until the next run stopped it)
    wait_for(lambda: not pid_alive(server), 30, "the killed tuner's server to die with it")

    second = tuner(cli_zygote, "study", "run", str(study_file), cwd=tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert server_records(workdir) == []  # the next run dropped the dead server's record

    # status only reads the storage: in this process (a Python start-up saved)
    status = json.loads(tuner_here("study", "status", str(study_file), "--json").stdout)
    assert status["baseline"]["single_tok_per_s"] > 0
    trials = status["trials"]
    # launches: measured, failed, or pruned after launching (a pruned setting is never launched again)
    launched = [t for t in trials if t["status"] in ("measured", "failed")
                or (t["status"] == "pruned" and t.get("pruned_from") is None)]
    assert len(launched) == BUDGET  # the budget: no trial lost, none counted twice
    keys = [tuple(t["effective"].values()) for t in launched if t["remeasure_of"] is None]
    assert len(keys) == len(set(keys)), "an effective config was measured twice (not as a deliberate re-measurement)"
    assert status["front"], "a Pareto front"
    assert all(t["state"] in ("COMPLETE", "FAIL", "PRUNED") for t in trials)

    # The killed trial was failed and its parameters measured again by the second run.
    study = optuna.load_study(study_name="e2e", storage=f"sqlite:///{tmp_path / 'e2e.db'}")
    killed = [t for t in study.trials if t.state.name == "FAIL" and t.user_attrs.get("launching")]
    assert len(killed) == 1
    retried = [t for t in study.trials if t.system_attrs.get("failed_trial") == killed[0].number]
    assert retried and retried[0].state.name in ("COMPLETE", "PRUNED")
    assert retried[0].user_attrs["status"] in ("measured", "failed", "reused", "pruned")
    assert retried[0].params == killed[0].params

    # Every trial's server log is on disk, and nothing of ours is left running.
    for t in launched:
        assert (workdir / "trials" / str(t["number"]) / "server.log").exists()


def test_dry_run_prints_commands_and_writes_nothing(study_file, tmp_path):
    # the article's (1, 1, 3) as a seed: SGLang runs it with 2 draft tokens, and the dry run says so
    study_file.write_text(study_file.read_text() + "seed_trials: [{speculative_num_steps: 1, "
                          "speculative_eagle_topk: 1, speculative_num_draft_tokens: 3}]\n")
    r = tuner_here("study", "run", str(study_file), "--dry-run")  # it starts nothing: in this process
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    baseline_cmd = lines[lines.index("# baseline (no speculative decoding):") + 1]
    assert "-m tuner.sim" in baseline_cmd and "--speculative" not in baseline_cmd
    assert "--max-running-requests 32" in r.stdout
    assert "--speculative-num-steps 3 --speculative-eagle-topk 1 --speculative-num-draft-tokens 4" in r.stdout
    assert "SGLang runs it as steps=1 topk=1 draft=2" in r.stdout
    assert not (tmp_path / "e2e.db").exists()
    assert not (tmp_path / "e2e").exists()


def test_bad_study_file_exits_2_and_writes_nothing(tmp_path):
    p = tmp_path / "bad.yaml"
    p.write_text(STUDY.replace(f"n_trials: {BUDGET}", "n_trials: nine"))
    r = tuner_here("study", "run", str(p))  # refused before anything starts: in this process
    assert r.exit_code == 2
    assert r.stderr.strip().count("\n") == 0 and "budget.n_trials" in r.stderr
    assert not (tmp_path / "e2e.db").exists()
