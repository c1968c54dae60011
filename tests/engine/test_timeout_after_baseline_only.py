"""A run continued after its first run measured the baseline alone (stopped by its timeout, or
interrupted) judges whether its first trial fits its `--timeout` by the baseline's suite, as a fresh
run does, not by the model load alone (QA, qa139: `--timeout 15m` on such a study spent 24m51s of
modelled GPU time on one trial). README: "start no trial that would not finish in time"."""

import optuna
import yaml
from click.testing import CliRunner
from support.model_study import model_study_data

from tuner.cli import cli

LOAD_S = 600.0  # the shipped k2.6-tp8-pcie profile's runtime.load_s: the old rule's whole estimate
TIMEOUT_S = 650  # more than a launch's load, less than the baseline's suite or any trial's


def _durations(url: str, name: str) -> list[float]:
    study = optuna.load_study(study_name=name, storage=url)
    return [t.user_attrs["model_duration_s"] for t in study.get_trials(deepcopy=False)
            if "model_duration_s" in t.user_attrs]


def test_a_run_after_the_baseline_alone_keeps_to_its_timeout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = model_study_data("night", seed=1)
    data["budget"] = {"n_trials": 4}
    (tmp_path / "night.yaml").write_text(yaml.safe_dump(data))
    url = f"sqlite:///{tmp_path / 'night.db'}"
    r = CliRunner().invoke(cli, ["study", "run", "night.yaml", "--timeout", "1s"])  # the baseline alone
    assert r.exit_code == 0 and "0 measured" in r.output, r.output
    (baseline_s,) = _durations(url, "night.baseline")
    assert LOAD_S < TIMEOUT_S < baseline_s, baseline_s  # the case: the load fits, the suite does not

    r = CliRunner().invoke(cli, ["study", "run", "night.yaml", "--timeout", f"{TIMEOUT_S}s"])
    assert r.exit_code == 0, r.output
    spent = sum(_durations(url, "night"))
    assert spent <= TIMEOUT_S, f"the run spent {spent:.0f} modelled s of a {TIMEOUT_S} s budget: {r.output}"
    assert "would not finish within the modelled GPU time budget" in r.output, r.output
