"""Crash at any point, recover exactly (tuner/engine/killpoints.py, finish.py, journal.py,
requeue.py): a worker kills itself with SIGKILL at each named point of a trial's (and the
baseline's) life, a second worker runs the study to its end, and then

* the study holds exactly its budget of launches, each effective setting measured once;
* a trial killed before its measurement was journaled is measured again (its retry), never counted
  twice; one killed after is never measured again: its journaled figures are what storage holds;
* no trial claims a result it did not measure (a reused trial carries the values of a finished
  measurement; no trial is left RUNNING, no journal entry unreplayed).

Engine points run on the performance model (worker processes of a few seconds); the server's own
points (``launched``, and ``figures`` with its files) run `tuner study run` on the simulator. Each
worker and each `tuner` command is a process of its own, forked from an interpreter that imported
tuner once (tests/support/zygote.py), which saves every one of them a second of imports.
"""

import json
import os
import shutil
import signal
import time
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState
from support.faults import ROOT, deliberate_again, launches_by_trial, study_file
from support.zygote import TUNER_CLI, start_zygote
from support.zygote import cli_zygote as zygote_of_the_cli

from tuner.config.study import load_study
from tuner.engine.killpoints import BASELINE_POINTS, TRIAL_POINTS
from tuner.engine.study import create_study
from tuner.server.procs import process_alive

BUDGET = 3
#: The server points' studies: each launch a simulator process, so no more than the killed trial needs.
SERVER_BUDGET = 2

STUDY = f"""
name: kill
search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
server: {{backend: sim, model_path: moonshotai/Kimi-K2.6, draft_model_path: sim/draft, tp_size: 8}}
bench: {{suite: quick}}
sampler: {{seed: 4}}
budget: {{n_trials: {BUDGET}, prune: false}}  # exact launch counts (pruning: tests/engine/test_pruning*)
"""

#: One worker on the performance model; every finished measurement is logged (before it is
#: recorded) to argv[2], with its figure, so the test knows what was measured in which run.
WORKER = """
import json, os, sys
from tuner.config.suite import load_suite
from tuner.engine.backends import ModelBackend
from tuner.engine.runner import run_study
from tuner.engine.study import config_from_study, open_study

url, log, workdir, seed = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])

class Logged(ModelBackend):
    def measure(self, spec, label, record, on_event=None, on_stage=None):
        def logged(m):
            with open(log, "a") as f:
                f.write(json.dumps({"run": seed, "label": label, "spec": None if spec is None else spec.label(),
                                    "single": m.figures.single_tok_per_s}) + "\\n")
                f.flush()
                os.fsync(f.fileno())
            record(m)
        return super().measure(spec, label, logged, on_event, on_stage)

config, space, suite = config_from_study(open_study("kill", url), workdir)
run_study(config, url, Logged("k2.6-tp8-pcie", load_suite(suite), noise=0.02, seed=seed))
"""

#: Points that fire once per trial of the engine, and the occurrence to kill at: the second trial,
#: so the study already holds a measurement (the baseline's points: its one measurement).
ENGINE_POINTS = [f"{p}@2" for p in TRIAL_POINTS if p != "launched"] + \
    [p for p in BASELINE_POINTS if p != "baseline.launched"]


#: What a worker imports before it runs (in the zygote, once per module and xdist worker).
PRELOAD = ["tuner.config.suite", "tuner.engine.backends", "tuner.engine.runner", "tuner.engine.study",
           "tuner.engine.storage", "alembic.context", "alembic.op", "sqlalchemy.orm", "sqlalchemy.dialects.sqlite"]
HEARTBEAT = {"TUNER_HEARTBEAT_INTERVAL_S": "1", "TUNER_HEARTBEAT_GRACE_S": "4"}


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    """Workers forked from one interpreter that imported tuner once (support/zygote.py): each is a
    process of its own, killed by a real SIGKILL, without a fresh interpreter's second of imports."""
    env = {k: v for k, v in os.environ.items() if k != "TUNER_TEST_KILL_AT"}
    z = start_zygote(PRELOAD, {**env, **HEARTBEAT}, tmp_path_factory.mktemp("zygote"))
    yield z
    z.close()


@pytest.fixture(scope="module")
def created(tmp_path_factory):
    """The study as created, built once and copied into each test (its SQLite file)."""
    folder = tmp_path_factory.mktemp("created")
    study = folder / "kill.yaml"
    study.write_text(STUDY)
    create_study(load_study(study), f"sqlite:///{folder / 'kill.db'}")
    return folder / "kill.db"


@pytest.fixture(scope="module")
def cli_zygote(tmp_path_factory):
    """`tuner` commands forked from one interpreter that imported the CLI once (support/zygote.py):
    each a process of its own, as ``python -m tuner`` is, killed by a real SIGKILL; its servers are
    real simulator processes. No heartbeat override at import: these tests never set one."""
    yield from zygote_of_the_cli(tmp_path_factory)


def worker(zygote, url: str, log: Path, workdir: Path, seed: int, kill_at: str | None, cwd: Path):
    env = {**os.environ, **HEARTBEAT}
    env.pop("TUNER_TEST_KILL_AT", None)
    if kill_at:
        env["TUNER_TEST_KILL_AT"] = kill_at
    return zygote.run(WORKER, [url, log, workdir, seed], env=env, cwd=cwd, timeout=240)


def check_exact(url: str, journal: Path, budget: int = BUDGET):
    """The study as it must be after any crash and a rerun; returns its trials by number."""
    study = optuna.load_study(study_name="kill", storage=url)
    trials = {t.number: t for t in study.get_trials(deepcopy=False)}
    assert not [n for n, t in trials.items() if t.state == TrialState.RUNNING], "a trial was left running"
    status = {n: t.user_attrs.get("status") for n, t in trials.items()}
    launched = [t for t in trials.values() if t.state == TrialState.COMPLETE and status[t.number] in ("measured", "failed")]
    assert len(launched) == budget, {n: (t.state.name, status[n]) for n, t in trials.items()}
    # the default sampler may measure a setting again on purpose (remeasure_of): not a lost tell
    keys = [t.user_attrs["effective_key"] for t in launched if not deliberate_again(t)]
    assert len(set(keys)) == len(keys), f"an effective setting was measured twice: {keys}"
    for t in trials.values():
        if t.state != TrialState.COMPLETE:
            continue
        assert status[t.number] in ("measured", "failed", "reused", "invalid"), (t.number, status[t.number])
        if status[t.number] == "measured":
            assert t.user_attrs.get("single_tok_per_s") and t.values and t.constraints["measured"] <= 0
        if status[t.number] == "reused":
            source = trials[t.user_attrs["reused_from"]]
            assert source.state == TrialState.COMPLETE and source.user_attrs["status"] in ("measured", "failed")
            assert t.values == source.values, "a reused trial without its measurement's values"
    assert not list(journal.glob("*.json")), "a journal entry was never replayed"
    return trials


@pytest.mark.parametrize("point", ENGINE_POINTS)
def test_killed_at_every_point_the_rerun_recovers_exactly(point, tmp_path, zygote, created):
    shutil.copyfile(created, tmp_path / "kill.db")
    url = f"sqlite:///{tmp_path / 'kill.db'}"
    log, workdir = tmp_path / "measured.jsonl", tmp_path / "wd"

    killed = worker(zygote, url, log, workdir, seed=1, kill_at=point, cwd=tmp_path)
    assert killed.returncode == -9, f"never reached {point}: {killed.stderr[-2000:]}"
    rerun = worker(zygote, url, log, workdir, seed=2, kill_at=None, cwd=tmp_path)
    assert rerun.returncode == 0, rerun.stderr[-3000:]

    trials = check_exact(url, workdir / "journal")
    measured = [json.loads(line) for line in log.read_text().splitlines()]
    by_spec: dict[str | None, list[dict]] = {}
    for m in measured:
        by_spec.setdefault(m["spec"], []).append(m)
    step = point.split("@")[0].removeprefix("baseline.")
    lost = step == "measured"  # killed between the measurement and its journal entry: measured again
    baseline_killed = point.startswith("baseline.")
    last_of_first_run = [m for m in measured if m["run"] == 1][-1]
    # One measurement per setting: only one lost before its journal entry may have been made again
    # (if the budget reached its retry), and the lost one never counts against the budget.
    twice = {spec for spec, runs in by_spec.items() if len(runs) > 1}
    assert twice <= ({last_of_first_run["spec"]} if lost else set()), by_spec
    assert all(len(runs) <= 2 for runs in by_spec.values())
    assert len(measured) == BUDGET + 1 + lost
    if step in ("journaled", "figures", "files", "told"):
        # Measured in the killed run, and that measurement -- not a new one -- is what storage holds.
        spec = last_of_first_run["spec"]
        assert last_of_first_run["label"] == ("baseline" if baseline_killed else last_of_first_run["label"])
        if baseline_killed:
            base = optuna.load_study(study_name="kill.baseline", storage=url)
            done = [t for t in base.get_trials(deepcopy=False) if t.state == TrialState.COMPLETE]
            assert [t.user_attrs["single_tok_per_s"] for t in done] == [last_of_first_run["single"]]
        else:
            stored = [t for t in trials.values() if t.state == TrialState.COMPLETE
                      and t.user_attrs.get("status") in ("measured", "failed")
                      and t.user_attrs.get("effective", {}) and _label(t.user_attrs["effective"]) == spec]
            assert [t.user_attrs["single_tok_per_s"] for t in stored] == [last_of_first_run["single"]]


def _label(eff: dict) -> str:
    return f"steps={eff['num_steps']} topk={eff['eagle_topk']} draft={eff['num_draft_tokens']}"


@pytest.mark.parametrize("point", ["launched@2", "figures@2"])
def test_killed_with_a_server_running_the_rerun_recovers_exactly(point, tmp_path, cli_zygote):
    """`tuner study run` on the simulator: killed with a trial's server up (the server dies with
    it; the rerun drops its record), or after storing the figures but before writing the files (the rerun writes them
    from the journal). A budget of two: the second trial is the one killed, and the rerun's only
    launch (``launched``: its retry) or none (``figures``: replayed, the budget full)."""
    path = study_file(tmp_path, "kill", SERVER_BUDGET, storage=f"sqlite:///{tmp_path / 'kill.db'}")
    workdir = tmp_path / "wd"
    env = {**os.environ, "TUNER_TEST_KILL_AT": point}
    run = ["study", "run", str(path), "--workdir", str(workdir)]
    killed = cli_zygote.run(TUNER_CLI, run, env=env, cwd=tmp_path, timeout=240)
    assert killed.returncode == -9, killed.stdout[-2000:] + killed.stderr[-2000:]
    env.pop("TUNER_TEST_KILL_AT")
    rerun = cli_zygote.run(TUNER_CLI, run, env=env, cwd=tmp_path, timeout=300)
    assert rerun.returncode == 0, rerun.stdout[-3000:] + rerun.stderr[-3000:]
    assert not list((workdir / "servers").glob("*.json")), "the killed worker's server was left running"
    trials = check_exact(f"sqlite:///{tmp_path / 'kill.db'}", workdir / "journal", SERVER_BUDGET)
    launches = launches_by_trial(workdir)
    assert launches.pop("baseline") == 1
    # every launch is a stored measurement, except the trial killed with its server up (retried)
    stored = {str(t.user_attrs.get("replayed_from", t.number)) for t in trials.values()
              if t.state == TrialState.COMPLETE and t.user_attrs.get("status") in ("measured", "failed")}
    assert set(launches.values()) == {1}
    extra = set(launches) - stored
    assert len(extra) == (1 if point.startswith("launched") else 0), (launches, stored)
    if point.startswith("figures"):
        assert "replayed from the journal into the storage: trial 1 (told)" in rerun.stdout
        assert (workdir / "trials" / "1" / "suite.json").exists()  # written from the journal
        assert trials[1].user_attrs["status"] == "measured" and "file_warnings" not in trials[1].user_attrs


def test_a_confirm_killed_with_a_server_running_is_cleaned_up_by_the_next_confirm(tmp_path, cli_zygote):
    """`tuner study confirm` killed with its baseline's server up (kill -9): QA, the next confirm
    launched its servers beside it (on a GPU node, an oom or a fixed port in use every launch) and
    left it running. The server now dies with its tuner (PR_SET_PDEATHSIG), and the next confirm
    cleans up after it first (its record), as a run does."""
    path = study_file(tmp_path, "conf", 1, storage=f"sqlite:///{tmp_path / 'conf.db'}")
    workdir = tmp_path / "wd"
    env = {k: v for k, v in os.environ.items() if k != "TUNER_TEST_KILL_AT"}
    first = cli_zygote.run(TUNER_CLI, ["study", "run", str(path), "--workdir", str(workdir)], env=env,
                           cwd=tmp_path, timeout=300)
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    confirm = ["study", "confirm", str(path), "--workdir", str(workdir), "--picks", "single", "--repeats", "2"]
    killed = cli_zygote.run(TUNER_CLI, confirm, env={**env, "TUNER_TEST_KILL_AT": "baseline.launched"},
                            cwd=tmp_path, timeout=240)
    assert killed.returncode == -9, killed.stdout[-2000:] + killed.stderr[-2000:]
    (record,) = [json.loads(p.read_text()) for p in (workdir / "servers").glob("*.json")]
    try:
        deadline = time.monotonic() + 30
        while process_alive(record["pid"], record["start_ticks"]) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not process_alive(record["pid"], record["start_ticks"]), "the killed confirm's server outlived it"
        again = cli_zygote.run(TUNER_CLI, confirm, env=env, cwd=tmp_path, timeout=300)
        assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
        assert not list((workdir / "servers").glob("*.json"))
    finally:
        if process_alive(record["pid"], record["start_ticks"]):
            os.killpg(record["pgid"], signal.SIGKILL)
