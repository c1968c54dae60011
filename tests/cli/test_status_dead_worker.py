"""Why a trial ended without a result, in `tuner study status` and the report: one whose worker on
another host stopped beating, failed by Optuna's heartbeat check (tuner.engine.workers.reap_dead_trials
-> fail_stale_trials), showed a bare FAIL (QA); a real SQLite storage with a 2-second grace, the real
reaper and the real commands."""

import json
import socket
import subprocess
import sys
import time
from contextlib import ExitStack

import optuna
from click.testing import CliRunner
from support.model_study import make_model_study, stale_fast_storage
from support.prepared_once import prepared_once

from tuner.cli import cli
from tuner.config.space import SearchSpace
from tuner.config.study import load_study
from tuner.engine.workers import Worker, reap_dead_trials, start_trial


def _one_trial_study(tmp_path_factory, name: str):
    """make_model_study(folder, name, n_trials=1), run once per session (whichever xdist worker asks
    first); each caller gets a copy of its own to write in."""
    return prepared_once(tmp_path_factory, name, lambda folder: make_model_study(folder, name, n_trials=1)) \
        / f"{name}.yaml"


def _failed_by_heartbeat(tmp_path_factory, attrs: dict):
    """A study whose one trial's worker, on another host, wrote ``attrs`` on it and stopped beating,
    and the trial failed by the real reaper (Optuna's heartbeat check, a 2-second grace): the study
    file, the trial's number and its retry's."""
    path = _one_trial_study(tmp_path_factory, "hb")
    config = load_study(path)
    storage = stale_fast_storage(config)
    study = optuna.load_study(study_name=config.name, storage=storage)
    space = SearchSpace.load(config.search_space)
    with ExitStack() as stack:  # as a worker starts a trial: it beats once, then its worker "stops"
        theirs = start_trial(study, Worker(), stack, space.distributions())
    storage.set_trial_user_attr(theirs._trial_id, "worker", {"host": "node-7", "pid": 4242, "start": 1})
    for key, value in attrs.items():
        storage.set_trial_user_attr(theirs._trial_id, key, value)
    number = theirs.number
    deadline = time.monotonic() + 60
    while storage.get_trial(theirs._trial_id).state.name == "RUNNING" and time.monotonic() < deadline:
        time.sleep(0.2)  # a poll: until past the 2-second grace, however loaded the machine
        reap_dead_trials(study)
    assert storage.get_trial(theirs._trial_id).state.name == "FAIL"
    retry = next(t.number for t in study.get_trials() if t.user_attrs.get("retry_of") == number)
    return path, number, retry


def test_a_trial_failed_by_its_heartbeat_says_its_worker_stopped_answering(tmp_path, tmp_path_factory):
    path, number, retry = _failed_by_heartbeat(tmp_path_factory, {})
    r = CliRunner().invoke(cli, ["study", "status", str(path), "--json"])
    assert r.exit_code == 0, r.output
    row = next(t for t in json.loads(r.output)["trials"] if t["number"] == number)
    assert row["state"] == "FAIL"
    assert row["note"] == (f"its worker (node-7, pid 4242) stopped answering: no heartbeat within the grace "
                           f"period, so another worker failed the trial; its setting is queued again "
                           f"(trial {retry})"), row
    r = CliRunner(env={"COLUMNS": "400"}).invoke(cli, ["study", "status", str(path)])
    line = next(x for x in r.output.splitlines() if x.strip("│ ").startswith(f"{number} "))
    assert "FAIL" in line and "its worker (node-7, pid 4242) stopped answering" in line, r.output
    report = tmp_path / "r.html"
    r = CliRunner().invoke(cli, ["study", "report", str(path), "-o", str(report)])
    assert r.exit_code == 0 and "its worker (node-7, pid 4242) stopped answering" in report.read_text()


def test_the_heartbeat_not_an_unfinished_verdict_says_why_a_trial_ended(tmp_path, tmp_path_factory):
    """QA: a worker that wrote a trial's verdict (``status: invalid`` and the note "nothing measured
    ...; the values are worst-case placeholders", tuner.engine.finish: the attributes before the tell)
    and died before its tell left a trial another host's heartbeat check failed; status and the report
    showed the unfinished verdict's note, which speaks of values the FAIL trial does not hold, not the
    heartbeat that ended it."""
    verdict = ("nothing measured (invalid: invalid_args); the values are worst-case placeholders that "
               "steer the sampler away, not results")
    path, number, retry = _failed_by_heartbeat(tmp_path_factory, {"status": "invalid", "note": verdict})
    why = (f"its worker (node-7, pid 4242) stopped answering: no heartbeat within the grace period, so "
           f"another worker failed the trial; its setting is queued again (trial {retry})")
    r = CliRunner().invoke(cli, ["study", "status", str(path), "--json"])
    assert r.exit_code == 0, r.output
    row = next(t for t in json.loads(r.output)["trials"] if t["number"] == number)
    assert (row["state"], row["status"], row["note"]) == ("FAIL", None, why), row
    report = tmp_path / "r.html"
    r = CliRunner().invoke(cli, ["study", "report", str(path), "-o", str(report)])
    assert r.exit_code == 0, r.output
    html = report.read_text()
    assert "its worker (node-7, pid 4242) stopped answering" in html and "worst-case placeholders" not in html


def test_a_dead_worker_of_this_host_is_reaped_by_pid_also_past_the_grace(tmp_path_factory):
    """QA: a run killed with kill -9 and run again after the heartbeat's grace (the next morning):
    Optuna's staleness failed its trial first, so the run did not say it had reaped it, and status
    said its worker (this very host) "stopped answering: no heartbeat within the grace period, so
    another worker failed the trial". README (Running, step 1): a dead worker's trials are failed
    on this host by pid and start time; its note is "its worker died"."""
    path = _one_trial_study(tmp_path_factory, "hb")  # the same prepared study as the tests above
    config = load_study(path)
    storage = stale_fast_storage(config)
    study = optuna.load_study(study_name=config.name, storage=storage)
    with ExitStack() as stack:
        mine = start_trial(study, Worker(), stack, SearchSpace.load(config.search_space).distributions())
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    storage.set_trial_user_attr(mine._trial_id, "worker", {"host": socket.gethostname(), "pid": gone.pid, "start": 1})
    deadline = time.monotonic() + 60
    while mine._trial_id not in storage._get_stale_trial_ids(study._study_id) and time.monotonic() < deadline:
        time.sleep(0.5)  # until its heartbeat is past the grace, however loaded the machine
    assert reap_dead_trials(study) == [mine.number]
    r = CliRunner().invoke(cli, ["study", "status", str(path), "--json"])
    assert r.exit_code == 0, r.output
    row = next(t for t in json.loads(r.output)["trials"] if t["number"] == mine.number)
    assert (row["state"], row["status"], row["note"]) == (
        "FAIL", "interrupted", "its worker died; its setting is queued again"), row
    again = [t for t in study.get_trials(states=(optuna.trial.TrialState.WAITING,))
             if t.user_attrs.get("retry_of") == mine.number]
    assert len(again) == 1 and again[0].params == mine.params, "its setting is not queued again, once"
