"""Three `tuner study run` workers, each launching its own simulated SGLang server, feed one study on
a real PostgreSQL server; one of them is killed with `kill -9` mid-trial.

The killed worker runs as if on another node (its own hostname, through a UTS namespace when this
machine allows one), so its trial can only be recovered through Optuna's heartbeat: the others
must fail it after the grace period and retry its setting. Its server dies with it (the launcher's
PR_SET_PDEATHSIG); a worker that next starts on that host drops the dead server's record. Heartbeats are shortened for
the test (TUNER_HEARTBEAT_INTERVAL_S / TUNER_HEARTBEAT_GRACE_S). PostgreSQL comes from tests/support/pg.py.
"""

import json
import os
import signal
import subprocess
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import optuna
import sqlalchemy
from optuna.trial import TrialState
from support.cli_in_process import tuner_here
from support.faults import wait_for
from support.forked_tuner import ForkedTuner, start_forked, start_zygote_under
from support.zygote import CLI_PRELOAD

from tuner.engine.records import launched

ROOT = Path(__file__).resolve().parents[2]
INTERVAL_S, GRACE_S = 1, 4
# The victim's trial is among the first few; the survivors then have launches of their own (>= 1 s
# apiece here) while its heartbeat goes stale, and once the rest of the budget is claimed they wait
# for its slot ("waiting for the study's last budget slots"), so it is retried whenever it goes stale.
# Six: two launches a worker is enough for all of that (ten cost two thirds more CPU, nothing more seen).
BUDGET = 6

STUDY = f"""
name: dist
search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
storage: ${{TUNER_STORAGE}}
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
  port: 0
  startup_timeout_s: 60
  stop_grace_s: 5
  sim: {{profile: k2.6-tp8-pcie, speedup: 400, load_seconds: 0.5, noise: 0.01, seed: 1}}
bench:
  suite:
    name: tiny
    prompts:
      - {{name: fib, text: "Write a Python function that returns the n-th Fibonacci number."}}
    single: {{lengths: [32], repeats: 1}}
    sweep: {{concurrencies: [1, 32], max_tokens: 16}}
    warmup: {{requests: 1, max_tokens: 4}}
    timeout_s: 30
budget: {{n_trials: {BUDGET}}}
"""


def pid_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def other_node_prefix() -> list[str]:
    """argv prefix running a command under another hostname (a private UTS namespace), if allowed."""
    probe = ["unshare", "--uts", "sh", "-c", "hostname node-b"]
    try:
        ok = subprocess.run(probe, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        ok = False
    # `sh -c '...; exec "$@"'`: the arguments pass through untouched (no user value in the script).
    return ["unshare", "--uts", "sh", "-c", 'hostname node-b && exec "$@"', "sh"] if ok else []


def test_three_workers_one_study_kill_9_loses_nothing(pg_url, tmp_path):
    password = urlsplit(pg_url).password
    study_file = tmp_path / "dist.yaml"
    study_file.write_text(STUDY)
    env = {**os.environ, "TUNER_STORAGE": pg_url, "TUNER_HEARTBEAT_INTERVAL_S": str(INTERVAL_S),
           "TUNER_HEARTBEAT_GRACE_S": str(GRACE_S), "PYTHONUNBUFFERED": "1"}
    # in-process: creating the study is the setup, not under test (a subprocess cost a second of imports)
    created = tuner_here("study", "create", str(study_file), cwd=tmp_path, env={"TUNER_STORAGE": pg_url})
    assert created.exit_code == 0, created.output
    workdir = tmp_path / "studies" / "dist"  # `run --study NAME` default, the same for every worker here
    run = ["study", "run", "--study", "dist"]

    remote = other_node_prefix()
    procs: list = []
    logs: list[Path] = []
    # Each worker forked from a zygote of its own (one worker at a time each), which imported the CLI
    # with the heartbeat settings (read at import): a real process, leading a session of its own as
    # Popen's start_new_session would, killed by a real SIGKILL; the victim's zygote runs under the
    # other hostname. The imports of a `study run` paid once a zygote, not once a worker
    # (support/forked_tuner.py). The worker that starts again after them reuses worker-b's zygote.

    def start(name: str, zygote) -> ForkedTuner:
        log = tmp_path / f"{name}.log"
        logs.append(log)
        p = start_forked(zygote, run, env, tmp_path, log, new_session=True)
        procs.append(p)
        return p

    storage = optuna.storages.RDBStorage(pg_url.replace("postgresql://", "postgresql+psycopg2://"))
    orphan_pid = None
    zygotes = {name: start_zygote_under(prefix, CLI_PRELOAD, env, tmp_path)
               for name, prefix in (("victim", remote), ("worker-b", []), ("worker-c", []))}
    try:
        victim = start("victim", zygotes["victim"])
        b, c = start("worker-b", zygotes["worker-b"]), start("worker-c", zygotes["worker-c"])

        def victim_mid_trial():
            study = optuna.load_study(study_name="dist", storage=storage)
            for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
                w = t.user_attrs.get("worker") or {}
                if w.get("pid") == victim.pid and t.user_attrs.get("launching"):
                    # The engine beats before anything else happens to a trial: Optuna never
                    # declares a trial without a heartbeat stale.
                    assert has_heartbeat(t._trial_id)
                    for rec in (workdir / "servers").glob("*.json"):
                        r = json.loads(rec.read_text())
                        if r["owner_pid"] == victim.pid and pid_alive(r["pid"]):
                            return t.number, r["pid"]
            return None

        def has_heartbeat(trial_id: int) -> bool:
            with storage.engine.connect() as conn:
                return conn.execute(sqlalchemy.text("SELECT count(*) FROM trial_heartbeats WHERE trial_id = :t"),
                                    {"t": trial_id}).scalar() > 0

        killed_number, orphan_pid = wait_for(victim_mid_trial, 120, "the victim's first trial", [victim])
        os.kill(victim.pid, signal.SIGKILL)
        killed_at = datetime.now()
        victim.wait(timeout=10)
        # PR_SET_PDEATHSIG: the server dies with its worker (it used to run on until the next start)
        wait_for(lambda: not pid_alive(orphan_pid), 30, "the killed worker's server to die with it")

        for p in (b, c):
            assert p.wait(timeout=180) == 0, (tmp_path / f"worker-{'b' if p is b else 'c'}.log").read_text()[-2000:]

        # A worker starting on that host again drops the dead server's record, and finds the budget spent.
        again = start("worker-a-again", zygotes["worker-b"])
        assert again.wait(timeout=120) == 0, logs[-1].read_text()[-2000:]
        assert not list((workdir / "servers").glob("*.json"))
        assert f"budget of {BUDGET} trials is spent" in logs[-1].read_text()
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait(timeout=10)
        if orphan_pid and pid_alive(orphan_pid):
            os.killpg(orphan_pid, signal.SIGKILL)  # the server's own group (it leads a new session)
        for z in zygotes.values():
            z.close()

    study = optuna.load_study(study_name="dist", storage=storage)
    trials = study.get_trials(deepcopy=False)
    # launched: measured, failed, or pruned after launching (tuner.engine.pruning)
    counted = [t for t in trials if launched(t.user_attrs.get("status"), t.user_attrs)]
    # exactly the budget, each effective config measured once
    assert len(counted) == BUDGET
    keys = [t.user_attrs["effective_key"] for t in counted if t.user_attrs.get("remeasure_of") is None]
    assert len(set(keys)) == len(keys), "an effective config was measured twice (not as a deliberate re-measurement)"
    assert all(t.state in (TrialState.COMPLETE, TrialState.PRUNED) for t in counted)
    # all three workers measured something (the victim at least its killed trial)
    workers = {(t.user_attrs["worker"]["host"], t.user_attrs["worker"]["pid"]) for t in counted}
    assert len(workers) >= 2
    # the killed trial: failed, and its setting retried and measured by another worker
    killed = trials[killed_number]
    assert killed.state == TrialState.FAIL
    retries = [t for t in trials if t.system_attrs.get("failed_trial") == killed_number]
    assert len(retries) == 1 and retries[0].state in (TrialState.COMPLETE, TrialState.PRUNED)
    assert retries[0].params == killed.params
    assert retries[0].user_attrs["worker"]["pid"] != victim.pid
    assert killed.user_attrs["effective_key"] in keys
    if remote:
        # another node's trial can only be declared dead by its heartbeat going stale
        assert killed.user_attrs["worker"]["host"] == "node-b"
        assert (killed.datetime_complete - killed_at).total_seconds() >= GRACE_S - INTERVAL_S - 0.5
    # launches: the baseline once, every counted trial once, and the killed one
    launches = {}
    for log in workdir.rglob("server.log"):
        launches[log.parent.name] = log.read_text(errors="replace").count(" launch: ")
    assert launches.pop("baseline") == 1
    by_number = {int(k): v for k, v in launches.items() if k.isdigit()}
    assert by_number == {**{t.number: 1 for t in counted}, killed_number: 1}
    # no password anywhere a person could read it
    for log in [*logs, *workdir.rglob("*.log")]:
        assert password not in log.read_text(errors="replace"), log
    for t in trials:
        assert password not in json.dumps(t.user_attrs, default=str)
    assert password not in json.dumps(study.user_attrs, default=str)
    storage.engine.dispose()
    # a worker that finds the last slots held by others' launches waits for them without asking for
    # trials: at most a race or two steps back (it used to ask and abandon twice a second meanwhile)
    abandoned = [t for t in trials if t.user_attrs.get("status") == "abandoned" and not t.user_attrs.get("stepped_aside")]
    assert len(abandoned) <= 2, [t.number for t in abandoned]
