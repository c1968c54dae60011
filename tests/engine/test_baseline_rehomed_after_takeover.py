"""A worker paused during its baseline past the heartbeat's grace: another worker fails that baseline
trial as dead, measures the baseline again and judges its trials against it. The first, woken,
stores its measurement as a new baseline trial (tuner.engine.finish re-homes it). QA (qa125, two real
``tuner study run`` workers on PostgreSQL, one under another hostname frozen with SIGSTOP at its
baseline's journal entry): the woken worker said nothing of where its baseline went, and its late
copy became the study's baseline, so its trials (and every later one) were judged against another
baseline than the other worker's, and status showed figures the first trials were not judged against.

In process, on a real SQLite file, through the performance model: the takeover is done at the woken
worker's ``baseline.journaled`` kill point, with the calls the other worker makes (``interrupt``:
FAIL as dead; then its own baseline asked and told as measured, with figures of its own)."""

from __future__ import annotations

import optuna
import pytest
from optuna.trial import TrialState
from support.model_study import SPACE, STUDY

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine import finish as finish_module
from tuner.engine.asktell import ask, tell
from tuner.engine.backends import ModelBackend
from tuner.engine.baseline import baseline_values, find_baseline
from tuner.engine.outcome import is_figure
from tuner.engine.runner import run_study
from tuner.engine.study import create_study
from tuner.engine.workers import interrupt


def _backend() -> ModelBackend:
    return ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1)


def _study(folder, name: str):
    path = folder / f"{name}.yaml"
    path.write_text(STUDY.format(name=name, space=SPACE, profile="k2.6-tp8-pcie", args="",
                                 seeds="default_seed_trials: false\n"))
    config = load_study(path)
    create_study(config, config.storage)
    return config


@pytest.fixture
def other_baseline(tmp_path) -> dict:
    """A measured baseline's attributes (another study's), its figures 20% lower: the other worker's."""
    ref = _study(tmp_path, "ref")
    run_study(ref, ref.storage, _backend(), n_trials=1)
    (measured,) = optuna.load_study(study_name="ref.baseline", storage=ref.storage).trials
    return {k: v * 0.8 if is_figure(k) and isinstance(v, float) else v for k, v in measured.user_attrs.items()}


def test_a_baseline_rehomed_after_a_takeover_is_said_and_does_not_replace_the_one_measured_since(
        tmp_path, monkeypatch, other_baseline):
    config = _study(tmp_path, "demo")
    seen: dict = {}

    def at(name: str) -> None:
        if name != "baseline.journaled" or seen:
            return
        bstudy = optuna.load_study(study_name="demo.baseline", storage=config.storage)
        (dead,) = bstudy.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        assert interrupt(bstudy, dead._trial_id, "its worker stopped answering (test)")
        theirs = ask(bstudy)
        for k, v in other_baseline.items():
            theirs.set_user_attr(k, v)
        tell(bstudy, theirs.number, baseline_values(bstudy, other_baseline))
        seen.update(failed=dead.number, theirs=theirs.number)

    monkeypatch.setattr(finish_module, "kill_point", at)
    events: list = []
    run_study(config, config.storage, _backend(), n_trials=1, on_event=lambda kind, info: events.append((kind, info)))
    assert seen, "the baseline never reached its journal entry"

    bstudy = optuna.load_study(study_name="demo.baseline", storage=config.storage)
    (copy,) = [t for t in bstudy.trials if t.user_attrs.get("replayed_from") == seen["failed"]]
    assert copy.state == TrialState.COMPLETE  # nothing measured is lost
    # the woken worker says where its baseline went
    warned = [i["message"] for k, i in events if k == "warning" and i.get("trial") == "baseline"]
    assert any(f"its measurement is stored as baseline trial {copy.number}" in m for m in warned), events
    # the baseline the other worker measured (begun after the failed one) stays the study's baseline
    assert find_baseline(optuna.load_study(study_name="demo", storage=config.storage)).trial_number == seen["theirs"]
    # and this worker's trial was judged against it, as the other worker's are
    (trial,) = [t for t in optuna.load_study(study_name="demo", storage=config.storage).trials
                if t.state == TrialState.COMPLETE]
    expected = trial.user_attrs["single_tok_per_s"] / other_baseline["single_tok_per_s"]
    assert trial.user_attrs["single_speedup"] == pytest.approx(expected, rel=1e-9)
