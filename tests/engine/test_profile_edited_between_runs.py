"""A simulator profile file edited between two runs of one study (QA): the study file names the
profile by path only, so the second run measured its trials on the new performance model, against
the baseline and the front of the old one. The study stores the profile's content when it is made,
and a run (from the file or ``--study NAME``) refuses a profile that has changed since, naming it."""

from __future__ import annotations

from pathlib import Path

import optuna
import yaml

from support.cli_in_process import tuner_here
from support.model_study import model_study_data
from tuner.sim.profile import PROFILES_DIR


def _study_on_a_profile_file(tmp_path: Path) -> tuple[Path, Path]:
    profile = tmp_path / "prof.yaml"
    profile.write_text((PROFILES_DIR / "k2.6-tp8-pcie.yaml").read_text())
    data = model_study_data("edited", seed=1)
    data["server"]["model"]["profile"] = "prof.yaml"
    data["default_seed_trials"] = False
    data["budget"] = {"n_trials": 6}
    study = tmp_path / "edited.yaml"
    study.write_text(yaml.safe_dump(data))
    return study, profile


def _complete(tmp_path: Path) -> int:
    storage = optuna.storages.RDBStorage(f"sqlite:///{tmp_path / 'edited.db'}")
    trials = optuna.load_study(study_name="edited", storage=storage).get_trials(deepcopy=False)
    storage.remove_session()
    return sum(t.state == optuna.trial.TrialState.COMPLETE for t in trials)


def test_a_profile_edited_between_runs_is_refused_and_nothing_is_measured_on_it(tmp_path):
    study, profile = _study_on_a_profile_file(tmp_path)
    first = tuner_here("study", "run", str(study), "--n-trials", "1", cwd=tmp_path)
    assert first.exit_code == 0, first.output
    assert _complete(tmp_path) == 1

    # a comment is no change to the model: the study goes on
    profile.write_text(profile.read_text() + "# a note\n")
    same = tuner_here("study", "run", str(study), "--n-trials", "1", cwd=tmp_path)
    assert same.exit_code == 0, same.output
    assert _complete(tmp_path) == 2

    text = profile.read_text()
    assert "  hidden_size: 7168 " in text
    profile.write_text(text.replace("  hidden_size: 7168 ", "  hidden_size: 4096 "))
    by_name = ["--study", "edited", "--storage", f"sqlite:///{tmp_path / 'edited.db'}"]
    for args in (["study", "run", str(study), "--n-trials", "1"], ["study", "run", *by_name, "--n-trials", "1"],
                 ["study", "confirm", *by_name, "--repeats", "2"]):  # confirm measures too
        refused = tuner_here(*args, cwd=tmp_path)
        assert refused.exit_code == 2, refused.output
        lines = refused.stderr.strip().splitlines()
        assert len(lines) == 1 and "Traceback" not in refused.output, refused.output
        assert "server.model.profile" in lines[0] and "model.hidden_size differs" in lines[0], lines
        assert str(profile) in lines[0], lines
        assert _complete(tmp_path) == 2  # nothing measured on the other model

    # the profile put back: the study goes on where it stood
    profile.write_text(text)
    back = tuner_here("study", "run", str(study), "--n-trials", "1", cwd=tmp_path)
    assert back.exit_code == 0, back.output
    assert _complete(tmp_path) == 3
