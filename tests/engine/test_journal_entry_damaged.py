"""A journal entry damaged after it was written (truncated: a disk's crash, a hand's edit): the
next run skipped it in silence, every time, and left it where it was (QA): its measurement lost
unsaid. Entries are written whole, so one that does not read is damaged for good: the run says so
once, names the trial, moves it to ``journal/set-aside/`` and measures the setting again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import optuna
import yaml
from optuna.trial import TrialState

from support.cli_in_process import tuner_here
from support.model_study import model_study_data


def test_a_damaged_journal_entry_is_said_once_and_set_aside(tmp_path):
    data = model_study_data("dmg", seed=1)
    data["budget"] = {"n_trials": 4}
    (tmp_path / "dmg.yaml").write_text(yaml.safe_dump(data))
    # a real worker killed (SIGKILL) right after journaling its second measurement (trial 1)
    env = {**os.environ, "TUNER_TEST_KILL_AT": "journaled@2"}
    killed = subprocess.run([sys.executable, "-m", "tuner", "study", "run", "dmg.yaml"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    assert killed.returncode == -9, killed.stderr
    journal = tmp_path / "dmg" / "journal"
    [entry] = list(journal.glob("*.json"))
    assert entry.name.startswith("dmg-1-")
    entry.write_bytes(entry.read_bytes()[:1000])  # truncated

    first = tuner_here("study", "run", "dmg.yaml", "--n-trials", "1", cwd=tmp_path)
    assert first.exit_code == 0, first.output
    said = [line for line in first.output.splitlines() if "cannot be read" in line]
    assert len(said) == 1 and "trial 1" in said[0] and "set-aside" in said[0], first.output
    assert not list(journal.glob("*.json"))
    assert (journal / "set-aside" / entry.name).stat().st_size == 1000

    again = tuner_here("study", "run", "dmg.yaml", "--n-trials", "1", cwd=tmp_path)
    assert again.exit_code == 0, again.output
    assert "cannot be read" not in again.output

    storage = optuna.storages.RDBStorage(f"sqlite:///{Path(tmp_path) / 'dmg.db'}")
    trials = optuna.load_study(study_name="dmg", storage=storage).get_trials(deepcopy=False)
    storage.remove_session()
    assert not [t.number for t in trials if t.state == TrialState.RUNNING]
    assert trials[1].user_attrs.get("status") == "interrupted"
