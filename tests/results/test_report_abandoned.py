"""Trials that stepped back before their launch (status ``abandoned``: another worker was measuring
the setting the sampler proposed, or took the study's last budget slot) are listed on the report's
page as ``abandoned``, with why, as status counts them (QA, qa199: two workers' study listed its five
abandoned trials under ``interrupted``, "trials a dead worker left behind", with no message, beneath a
summary that counted "5 abandoned")."""

import re
from pathlib import Path

import optuna

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.backends import ModelBackend
from tuner.engine.records import spec_from_params, spec_key
from tuner.engine.runner import make_sampler, run_study
from tuner.engine.study import config_from_study, create_study, open_study
from tuner.engine.trial import ABANDONED, TrialRunner
from tuner.engine.workers import Worker
from tuner.results.report import write_report

ROOT = Path(__file__).resolve().parents[2]
STUDY = f"""
name: ab
search_space: {ROOT / 'search_spaces' / 'eagle3.yaml'}
server:
  backend: model
  model_path: moonshotai/Kimi-K2.6
  draft_model_path: sim/kimi-k2.6-eagle3
  model: {{profile: k2.6-tp8-pcie, noise: 0.01, seed: 1}}
bench: {{suite: quick}}
default_seed_trials: false
sampler: {{seed: 3}}
budget: {{n_trials: 2}}
"""


def _rows(page: str, cls: str) -> list[list[str]]:
    table = re.search(rf'<table class="{cls}">.*?</table>', page, re.S).group(0)
    return [re.findall(r"<td>(.*?)</td>", row, re.S) for row in re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]]


def test_abandoned_trials_are_listed_as_abandoned_with_why(tmp_path):
    path = tmp_path / "ab.yaml"
    path.write_text(STUDY)
    config = load_study(path)
    create_study(config, config.storage)
    backend = ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1)
    run_study(config, config.storage, backend, n_trials=1)  # the baseline and one measured trial

    # a second worker, as tests/engine/test_study_engine.py plays one: the engine's own runner steps back
    study = open_study(config.name, config.storage)
    _, space, _ = config_from_study(study)
    study = optuna.load_study(study_name=config.name, storage=config.storage, sampler=make_sampler(config, space, 0))
    runner = TrialRunner(config, study, space, backend, Worker(), lambda kind, info: None)
    aside = study.ask(space.distributions())
    other = study.ask(space.distributions())  # another worker, measuring the same setting now
    other.set_user_attr("claim", spec_key(space.resolve(spec_from_params(aside.params)).effective))
    assert runner._run(aside, baseline=None) == ABANDONED
    other.set_user_attr("claim", None)
    other.set_user_attr("launching", True)  # ... and now launching into the study's last budget slot
    budget = study.ask(space.distributions())
    assert runner._run(budget, baseline=None) == ABANDONED
    study.tell(other, state=optuna.trial.TrialState.FAIL)  # the other worker dies: left behind

    page = (write_report(open_study(config.name, config.storage), tmp_path / "r.html").html
            .read_text(encoding="utf-8"))
    classes = {c: n for c, _, n in _rows(page, "failure-classes")}
    assert classes == {"abandoned": f"{aside.number}, {budget.number}", "interrupted": str(other.number)}
    why = {int(r[0]): (r[1], r[4]) for r in _rows(page, "failures")}
    assert why[aside.number][0] == why[budget.number][0] == "abandoned"
    assert "another worker was measuring this setting" in why[aside.number][1]
    assert "last budget slot" in why[budget.number][1]
    assert why[other.number][0] == "interrupted"
