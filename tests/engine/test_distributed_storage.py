"""One study on a real PostgreSQL server shared by several worker processes (tuner/storage.py,
tuner/study.py): creating a fresh storage from many processes at once, three workers on the
performance model (no servers) sharing a budget, the storage URL from the environment, and no
password in any output or anywhere in the database. The full path over simulated servers, with
`kill -9`, is in test_distributed_workers.py. PostgreSQL comes from tests/support/pg.py."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from support.forked_together import run_together
from support.pg import database_text
from support.zygote import CLI_PRELOAD, TUNER_CLI, start_zygote

ROOT = Path(__file__).resolve().parents[2]

STUDY = f"""
name: dist
search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
server:
  backend: sim
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  tp_size: 8
bench: {{suite: quick}}
storage: ${{TUNER_STORAGE}}
budget: {{n_trials: {{budget}}}}
"""

#: Start N copies of this at the same instant t0 (argv: t0, then the tuner's own arguments): the
#: import time of each process is spent before t0, so they really collide on the database. They are
#: forked from one parent that imported the CLI (support/forked_together.py): one import, not N.
AT_ONCE = """
import sys, time
t0 = float(sys.argv[1])
from tuner.cli import main
time.sleep(max(0.0, t0 - time.time()))
sys.argv = ["tuner", *sys.argv[2:]]
main()
"""

#: One worker on the performance model: run_study with a backend that takes a little time per
#: measurement (so workers overlap); prints its summary and launch count as JSON.
#:
#: The workers start run_study together, once each has imported and opened the storage: a barrier of
#: files in argv[2] (a condition, not a fixed head start that a loaded machine may outlast).
#: Its first trial measurement waits (polling, with a deadline) until every worker has reached its
#: own first trial measurement: a barrier of files in argv[3]. Without it, on a loaded 2-core machine
#: one worker could still be importing or opening the storage while the other two spent the whole
#: budget (1 run in 6 failed that way). The barrier only orders the start; claims, the budget and
#: the baseline are shared through the storage exactly as before.
#:
#: The workers are forked from one parent that imported what a worker imports, the sampler's scipy
#: and scikit-learn too (:data:`MODEL_PRELOAD`): one import (about 3 CPU s), not three.
MODEL_WORKER = """
import json, pathlib, sys, time
from tuner.engine.backends import ModelBackend
from tuner.config.suite import load_suite
from tuner.engine.runner import run_study
from tuner.engine.study import config_from_study, open_study
from tuner.engine.storage import resolve_url

BARRIER, WORKERS, BARRIER_DEADLINE_S = pathlib.Path(sys.argv[3]), int(sys.argv[4]), 120.0

class SlowModel(ModelBackend):
    arrived = False

    def measure(self, spec, label, *a, **kw):
        if spec is not None and not self.arrived:  # this worker's first trial (not the baseline)
            self.arrived = True
            (BARRIER / sys.argv[1]).touch()
            deadline = time.monotonic() + BARRIER_DEADLINE_S
            while len(list(BARRIER.iterdir())) < WORKERS and time.monotonic() < deadline:
                time.sleep(0.05)
        time.sleep(0.2)
        return super().measure(spec, label, *a, **kw)

url = resolve_url(None)  # $TUNER_STORAGE
config, space, suite = config_from_study(open_study("dist", url))
backend = SlowModel("k2.6-tp8-pcie", load_suite(suite), noise=0.01, seed=int(sys.argv[1]))
# Start together (imports take unequal time): wait until every worker is this far (files in argv[2]),
# then sleep until one instant all of them compute alike (the last file's time + 1 s), so they
# collide on the baseline claim as at a fixed t0.
START = pathlib.Path(sys.argv[2])
(START / sys.argv[1]).touch()
deadline = time.monotonic() + BARRIER_DEADLINE_S
while len(list(START.iterdir())) < WORKERS and time.monotonic() < deadline:
    time.sleep(0.01)
time.sleep(max(0.0, max(f.stat().st_mtime for f in START.iterdir()) + 1.0 - time.time()))
s = run_study(config, url, backend)
print(json.dumps({"measured": s.measured, "reused": s.reused, "invalid": s.invalid, "calls": backend.calls,
                  "stopped": s.stopped_because}))
"""

#: What a model worker imports, lazily too (the structured sampler's surrogate: scipy, scikit-learn).
MODEL_PRELOAD = ["tuner.engine.backends", "tuner.config.suite", "tuner.engine.runner", "tuner.engine.study",
                 "tuner.engine.storage", "tuner.engine.structured", "scipy.stats", "scipy.linalg",
                 "sklearn.gaussian_process", "threadpoolctl"]

#: The three model workers' shared budget.
BUDGET = 6


def write_study(tmp_path: Path, budget: int) -> Path:
    p = tmp_path / "dist.yaml"
    p.write_text(STUDY.replace("{budget}", str(budget)))
    return p


def env_with(url: str) -> dict:
    env = {**os.environ, "TUNER_STORAGE": url}
    env.pop("TUNER_HEARTBEAT_INTERVAL_S", None)
    env.pop("TUNER_HEARTBEAT_GRACE_S", None)
    return env


def close(storage) -> None:
    """Close an Optuna RDB storage's connections (a study wraps it in a cache)."""
    getattr(storage, "_backend", storage).engine.dispose()


def test_many_workers_create_a_fresh_storage_at_once(pg_url, tmp_path):
    # Plain Optuna crashes here about one time in three with four processes
    # (IntegrityError: duplicate key value violates unique constraint "pg_type_typname_nsp_index").
    study = write_study(tmp_path, budget=5)
    t0 = time.time() + 4.0
    argv = [str(t0), "study", "create", str(study), "--storage", "${TUNER_STORAGE}"]
    results = run_together(CLI_PRELOAD, AT_ONCE, [argv] * 4, env_with(pg_url), tmp_path, timeout_s=90)
    for r in results:
        assert r.returncode == 0, r.stderr
        assert "study dist ready in postgresql" in r.stdout
    import optuna

    from tuner.engine.storage import open_storage

    storage = open_storage(pg_url)
    try:
        names = sorted(s.study_name for s in optuna.get_all_study_summaries(storage))
        assert names == ["dist", "dist.baseline"]
        study_obj = optuna.load_study(study_name="dist", storage=storage)
        seeds = study_obj.get_trials(deepcopy=False)
        # the default seed trials, queued exactly once
        from tuner.engine.seeds import DEFAULT_SEED_TRIALS

        assert all(t.user_attrs.get("seed") for t in seeds)
        assert len(seeds) == len({tuple(sorted(t.system_attrs["fixed_params"].items())) for t in seeds}) == len(DEFAULT_SEED_TRIALS)
    finally:
        close(storage)


def test_three_model_workers_share_one_budget(pg_url, tmp_path):
    from tuner.config.study import load_study
    from tuner.engine.baseline import find_baseline
    from tuner.engine.records import load_records
    from tuner.engine.study import create_study, open_study

    # Six trials, two apiece: every worker takes part (the barrier) and they still contend for
    # claims, the budget and the one baseline; twelve showed nothing more and cost twice the CPU.
    config = load_study(write_study(tmp_path, budget=BUDGET))
    create_study(config, pg_url)
    start, barrier = tmp_path / "start", tmp_path / "barrier"
    start.mkdir()
    barrier.mkdir()
    argvs = [[str(seed), str(start), str(barrier), "3"] for seed in (1, 2, 3)]
    results = run_together(MODEL_PRELOAD, MODEL_WORKER, argvs, env_with(pg_url), tmp_path, timeout_s=240)
    summaries = []
    for r in results:
        assert r.returncode == 0, r.stderr
        summaries.append(json.loads(r.stdout.strip().splitlines()[-1]))
    # every worker took part, and together they measured exactly the study's budget
    assert sum(s["measured"] for s in summaries) == BUDGET
    assert all(s["measured"] >= 1 for s in summaries), summaries
    # one baseline in all: every launch is either a measured trial or that baseline
    assert sum(s["calls"] for s in summaries) == BUDGET + 1
    study = open_study("dist", pg_url)
    records = load_records(study)
    launched = [r for r in records if r.status in ("measured", "failed")]
    assert len(launched) == BUDGET
    keys = [r.attrs["effective_key"] for r in launched if r.attrs.get("remeasure_of") is None]
    assert len(set(keys)) == len(keys), "an effective config was measured twice (not as a deliberate re-measurement)"
    assert find_baseline(study) is not None
    hosts_pids = {(r.attrs["worker"]["host"], r.attrs["worker"]["pid"]) for r in launched}
    assert len(hosts_pids) == 3
    close(study._storage)


@pytest.fixture(scope="module")
def tuner_zygote(tmp_path_factory):
    """`tuner` commands as processes of their own, each forked from one interpreter that imported the
    CLI once (support/zygote.py): eleven of them cost eleven imports (about a CPU second each) before.
    Its environment is :func:`env_with`'s (what a module reads at import), less the storage URL,
    which each run gets."""
    env = {k: v for k, v in env_with("").items() if k not in ("TUNER_TEST_KILL_AT", "TUNER_STORAGE")}
    z = start_zygote(CLI_PRELOAD, env, tmp_path_factory.mktemp("tuner-zygote"))
    yield z
    z.close()


def test_password_is_never_printed_nor_stored(pg_url, tmp_path, tuner_zygote):
    password = urlsplit(pg_url).password
    assert password and len(password) >= 8
    study = write_study(tmp_path, budget=3)
    env = env_with(pg_url)
    ok = [
        ["study", "create", str(study)],               # the file says storage: ${TUNER_STORAGE}
        ["study", "create", str(study), "--storage", "${TUNER_STORAGE}"],
        ["study", "run", "--study", "dist", "--dry-run"],
        ["study", "status", "dist"],
        ["study", "status", "--study", "dist", "--json"],
    ]
    outputs, stdouts = [], []
    for argv in ok:
        r = tuner_zygote.run(TUNER_CLI, argv, env=env, cwd=tmp_path, timeout=120)
        assert r.returncode == 0, (argv, r.stderr)
        outputs.append(r.stdout + r.stderr)
        stdouts.append(r.stdout)
    assert "postgresql://tuner:***@" in outputs[0]
    status = json.loads(stdouts[4])  # the --json run above (not a second one)
    assert status  # parsed: the JSON output is whole

    parts = urlsplit(pg_url)
    wrong = "Wr0ngSecret4242"
    bad = [
        # wrong password, in the URL on the command line
        (["study", "status", "dist", "--storage",
          pg_url.replace(f":{password}@", f":{wrong}@")], wrong),
        # right password, nothing listening on that port
        (["study", "status", "dist", "--storage",
          pg_url.replace(f"@{parts.hostname}:{parts.port}", f"@{parts.hostname}:1")], password),
        # right password, a database that does not exist
        (["study", "status", "dist", "--storage", pg_url.rsplit("/", 1)[0] + "/no_such_db"], password),
        # right server, a study that does not exist
        (["study", "status", "nosuchstudy"], password),
    ]
    for argv, secret in bad:
        r = tuner_zygote.run(TUNER_CLI, argv, env=env, cwd=tmp_path, timeout=120)
        assert r.returncode != 0, argv
        text = r.stdout + r.stderr
        assert "Traceback" not in text, text
        assert secret not in text and password not in text, text
        assert "***" in text or "nosuchstudy" in text, text
        outputs.append(text)
    for text in outputs:
        assert password not in text
    assert password not in database_text(pg_url)


def test_heartbeat_timing_comes_from_the_environment():
    probe = "from tuner.engine import storage as s; print(s.HEARTBEAT_INTERVAL_S, s.HEARTBEAT_GRACE_S)"
    env = {**os.environ, "TUNER_HEARTBEAT_INTERVAL_S": "2", "TUNER_HEARTBEAT_GRACE_S": "7"}
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert r.stdout.split() == ["2", "7"], r.stderr
    env.pop("TUNER_HEARTBEAT_INTERVAL_S"), env.pop("TUNER_HEARTBEAT_GRACE_S")
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert r.stdout.split() == ["10", "40"], r.stderr
    env["TUNER_HEARTBEAT_GRACE_S"] = "5"  # shorter than the default interval: every trial would look dead
    r = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode != 0 and "TUNER_HEARTBEAT_GRACE_S" in r.stderr


def test_a_worker_given_a_wrong_database_stops_at_once_not_after_the_patience(pg_server, tmp_path,
                                                                              tuner_zygote):
    """A database that does not exist (like a wrong password) is the URL's fault: no wait fixes it.
    With the patience at 30 s a worker that waited would exit 75 saying the storage did not answer.
    The worker is a process of its own, forked from the module's zygote (the patience is read on
    every call, not at import)."""
    from support.pg import database_url

    url = database_url(pg_server, "tuner_no_such_database")
    r = tuner_zygote.run(TUNER_CLI, ["study", "run", "--study", "x", "--storage", url],
                         env={**os.environ, "TUNER_STORAGE_PATIENCE_S": "30"}, cwd=tmp_path, timeout=300)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "does not exist" in r.stderr and "did not answer" not in r.stderr and "retrying" not in r.stderr


def test_a_worker_waiting_for_its_storage_at_start_says_so(tmp_path, tuner_zygote):
    """Nothing listens on the port: the worker waits out its patience, and says so at once."""
    from tuner.server.ports import pick_free_port

    url = f"postgresql://tuner@127.0.0.1:{pick_free_port('127.0.0.1')}/tuner"
    r = tuner_zygote.run(TUNER_CLI, ["study", "run", "--study", "x", "--storage", url],
                         env={**os.environ, "TUNER_STORAGE_PATIENCE_S": "3"}, cwd=tmp_path, timeout=300)
    assert r.returncode == 75, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert "does not answer" in lines[0] and "retrying for up to 0m03s" in lines[0]
    assert "did not answer for" in lines[-1]
