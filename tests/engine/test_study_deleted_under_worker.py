"""A study deleted under a running worker (`tuner study delete --force`) and made anew under its name:
the worker stops with one line and writes nothing into the new study (tuner.engine.study.StudyReplaced).

QA: SQLite gives the new study the freed ids, so the worker's handle named the new study and its
trial's id a queued seed trial of it: the worker wrote its figures and intermediate values onto that
trial, stored its measurement there as a new trial, and went on measuring the new study against the
deleted study's baseline, exit 0."""

import subprocess
import sys

import optuna
from optuna.trial import TrialState
from support.cli_in_process import tuner_here
from support.faults import fault_env, launches_by_trial, slow_start, study_file, trial_server_up, wait_for

TUNER = [sys.executable, "-m", "tuner"]


def test_a_study_deleted_and_made_anew_under_a_worker_gets_nothing_of_it(tmp_path):
    db = tmp_path / "again.db"
    path = study_file(tmp_path, "again", 3, storage=f"sqlite:///{db}")
    # A start long enough to delete and create the study while trial 1's server starts: 4 s, from
    # the second run on (load_seconds: 4 in the file slowed the first run's baseline and trial 0 too)
    slow = slow_start(path, 4)
    workdir = tmp_path / "wd"
    argv = ["study", "run", str(path), "--workdir", str(workdir)]
    # the first run is the setup (a measured trial 0 whose server the worker's trial 1 follows), not
    # under test: in this process (a start-up and a storage opening saved), with the worker's environment
    first = tuner_here(*argv, "--n-trials", "1", cwd=tmp_path, env=fault_env())
    assert first.exit_code == 0, first.stdout[-3000:] + first.stderr[-3000:]
    slow.touch()
    log = tmp_path / "run.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([*TUNER, *argv], stdout=out, stderr=subprocess.STDOUT, env=fault_env(),
                                cwd=tmp_path, start_new_session=True)
    try:
        number = wait_for(lambda: trial_server_up(workdir, 0), 180, "trial 1's server", [proc])
        # the delete and the create are the fault, not under test: in this process (no start-ups), with
        # the worker's environment
        deleted = tuner_here("study", "delete", str(path), "--yes", "--force", cwd=tmp_path, env=fault_env())
        assert deleted.exit_code == 0, deleted.stdout + deleted.stderr
        created = tuner_here("study", "create", str(path), cwd=tmp_path, env=fault_env())
        assert created.exit_code == 0, created.stdout + created.stderr
        code = proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    out = log.read_text()
    assert code == 1 and "Traceback" not in out, out[-3000:]
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert errors == ["error: study again was deleted while this worker ran (tuner study delete); the server "
                      "is stopped, and a measurement it journaled is never stored into another study of that "
                      "name"], out[-3000:]
    assert launches_by_trial(workdir)[str(number)] == 1
    # The new study holds its queued seeds as `create` left them, and nothing of the old worker's.
    study = optuna.load_study(study_name="again", storage=f"sqlite:///{db}")
    assert [t.state for t in study.trials] == [TrialState.WAITING] * len(study.trials), \
        [(t.number, t.state.name, t.user_attrs) for t in study.trials]
    assert all(set(t.user_attrs) <= {"seed"} and not t.intermediate_values for t in study.trials), \
        [(t.number, t.user_attrs, t.intermediate_values) for t in study.trials]
    baseline = optuna.load_study(study_name="again.baseline", storage=f"sqlite:///{db}")
    assert baseline.trials == []
