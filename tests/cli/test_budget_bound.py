"""The budget's upper bound (tuner.config.study.MAX_TRIALS): a study file, --n-trials and --add-trials
are held to it, through the real commands; a study stored with a larger budget before the bound
still opens (its config is not refused when read back)."""

from click.testing import CliRunner
from support.model_study import make_model_study

from tuner.cli import cli
MAX_TRIALS = 100_000  # tuner.config.study.MAX_TRIALS, as the README states it


def _stored_budget(name: str, url: str):
    import optuna

    return optuna.load_study(study_name=name, storage=url).user_attrs["tuner_config"]["budget"]["n_trials"]


def test_add_trials_past_the_bound_is_one_line_and_extends_nothing(tmp_path):
    study = make_model_study(tmp_path, "b", n_trials=None)
    url = f"sqlite:///{tmp_path / 'b.db'}"
    study.write_text(study.read_text().replace("n_trials: 40", f"n_trials: {MAX_TRIALS - 2}"))
    r = CliRunner().invoke(cli, ["study", "create", str(study)])
    assert r.exit_code == 0 and f"budget.n_trials 40 -> {MAX_TRIALS - 2}" in r.output, r.output
    r = CliRunner().invoke(cli, ["study", "run", "--study", "b", "--storage", url, "--add-trials", "5",
                                  "--n-trials", "1"])  # before the bound: one launch, not 99,998
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "--add-trials" in lines[0], r.output
    assert f"at most {MAX_TRIALS}" in lines[0] and f"{MAX_TRIALS - 2}" in lines[0], r.output
    assert _stored_budget("b", url) == MAX_TRIALS - 2 and "extended" not in r.output


def test_a_study_stored_with_a_larger_budget_before_the_bound_still_opens(tmp_path):
    import optuna

    make_model_study(tmp_path, "old", n_trials=1)
    url = f"sqlite:///{tmp_path / 'old.db'}"
    stored = optuna.load_study(study_name="old", storage=url)
    config = stored.user_attrs["tuner_config"]
    stored.set_user_attr("tuner_config", {**config, "budget": {**config["budget"], "n_trials": 10 ** 18}})
    r = CliRunner().invoke(cli, ["study", "export", "old", "--storage", url, "--pick", "single"])
    assert r.exit_code == 0 and "speculative-num-steps: 3" in r.stdout, r.output


def test_add_trials_past_the_bound_from_a_study_file_writes_nothing(tmp_path):
    from support.model_study import SPACE, STUDY

    study = tmp_path / "f.yaml"
    study.write_text(STUDY.format(name="f", space=SPACE, profile="k2.6-tp8-pcie", args="", seeds="")
                     .replace("n_trials: 40", f"n_trials: {MAX_TRIALS - 2}"))
    r = CliRunner().invoke(cli, ["study", "run", str(study), "--dry-run", "--add-trials", "5"])
    assert r.exit_code == 2 and r.output.startswith("error: --add-trials: 5: would raise"), r.output
    r = CliRunner().invoke(cli, ["study", "run", str(study), "--add-trials", "5", "--n-trials", "1"])
    assert r.exit_code == 2 and r.output.startswith("error: --add-trials: 5: would raise"), r.output
    assert len(r.output.strip().splitlines()) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.yaml"]


def test_add_trials_past_the_bound_stores_no_change_of_the_file(tmp_path):
    # README "Extending a study": --add-trials past 100,000 "is refused before anything is stored",
    # also when the stored budget was raised past the file's and the file changes budget.prune.
    import optuna

    study = make_model_study(tmp_path, "p", n_trials=None)
    url = f"sqlite:///{tmp_path / 'p.db'}"
    stored = optuna.load_study(study_name="p", storage=url)
    config = stored.user_attrs["tuner_config"]
    stored.set_user_attr("tuner_config", {**config, "budget": {**config["budget"], "n_trials": MAX_TRIALS - 2}})
    study.write_text(study.read_text().replace("n_trials: 40}", "n_trials: 40, prune: false}"))
    r = CliRunner().invoke(cli, ["study", "run", str(study), "--add-trials", "5", "--n-trials", "1"])
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: --add-trials: 5: would raise"), r.output
    budget = optuna.load_study(study_name="p", storage=url).user_attrs["tuner_config"]["budget"]
    assert budget["n_trials"] == MAX_TRIALS - 2 and budget["prune"]["enabled"] is True, budget
