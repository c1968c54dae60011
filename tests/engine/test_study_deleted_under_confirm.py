"""A study deleted under a running `tuner study confirm` (`tuner study delete --force`) and made anew
under its name: the command stops with one line, as a run does, and writes nothing into the new
study (tuner.engine.confirm, the check of the study before each repeat and before its finish's first
write).

QA, qa205: the repeat's finish met its trial gone and ended the command in a traceback (KeyError
'Record does not exist.', then the same KeyError again from the cleanup of the repeat)."""

import json
from pathlib import Path

import optuna
from optuna.trial import TrialState
from support.cli_in_process import tuner_here
from support.faults import fault_env, slow_start, start_tuner, study_file, wait_for
from support.processes import finish

REPLACED = ("error: study again was deleted while this worker ran (tuner study delete); the server is stopped, "
            "and a measurement it journaled is never stored into another study of that name")


def candidate_server_up(workdir: Path) -> bool:
    """Whether a confirmation repeat of a setting has its server running now (its record on disk)."""
    for rec in (workdir / "servers").glob("*.json"):
        try:
            r = json.loads(rec.read_text())
        except (OSError, ValueError):
            continue
        if "--speculative-algorithm" in " ".join(r.get("cmdline", [])) and "confirm" in r.get("log_path", ""):
            return True
    return False


def test_a_study_deleted_and_made_anew_under_confirm_is_one_line(tmp_path):
    db = tmp_path / "again.db"
    path = study_file(tmp_path, "again", 3, storage=f"sqlite:///{db}")
    slow = slow_start(path, 3)  # the delete and the create land while the candidate's server starts
    workdir = tmp_path / "wd"
    # the run that measures the candidate is the setup, not under test: in this process (a start-up
    # and a storage opening saved), with the worker's environment
    first = tuner_here("study", "run", str(path), "--workdir", str(workdir), "--n-trials", "1", cwd=tmp_path,
                       env=fault_env())
    assert first.exit_code == 0, first.stdout[-3000:] + first.stderr[-3000:]
    slow.touch()
    log = tmp_path / "confirm.log"
    proc = start_tuner(["study", "confirm", str(path), "--workdir", str(workdir), "--repeats", "2",
                        "--max-candidates", "1"], fault_env(), tmp_path, log)
    try:
        wait_for(lambda: candidate_server_up(workdir), 180, "the candidate's server", [proc])
        # the delete and the create are the fault, not under test: in this process (no start-ups)
        deleted = tuner_here("study", "delete", str(path), "--yes", "--force", cwd=tmp_path, env=fault_env())
        assert deleted.exit_code == 0, deleted.stdout + deleted.stderr
        created = tuner_here("study", "create", str(path), cwd=tmp_path, env=fault_env())
        assert created.exit_code == 0, created.stdout + created.stderr
        code = proc.wait(timeout=200)
    finally:
        finish(proc)
    out = log.read_text()
    assert code == 1 and "Traceback" not in out, out[-3000:]
    assert [line for line in out.splitlines() if line.startswith("error:")] == [REPLACED], out[-3000:]
    # The new study holds its queued seeds as `create` left them; no confirmation of the old one's.
    storage = f"sqlite:///{db}"
    study = optuna.load_study(study_name="again", storage=storage)
    assert [t.state for t in study.trials] == [TrialState.WAITING] * len(study.trials), \
        [(t.number, t.state.name, t.user_attrs) for t in study.trials]
    names = [s.study_name for s in optuna.get_all_study_summaries(storage)]
    assert all(not optuna.load_study(study_name=n, storage=storage).trials for n in names if n != "again"), names
