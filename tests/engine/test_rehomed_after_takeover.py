"""A worker that wakes after another worker failed its trial (judged dead: no heartbeat within the
grace) re-homes its measurement as a new trial (tuner.engine.finish). Two things were wrong (QA,
qa114, two real ``tuner study run`` workers, one under another hostname frozen with SIGSTOP at its
journal entry): the copy of a setting the retry had measured meanwhile carried no ``remeasure_of``,
so ``status`` showed two independent first readings of one setting; and the woken worker printed
``trial 0: measured (...)`` although trial 0 was FAIL and its figures were trial 5's.

In process, on a real SQLite file, through the performance model: the takeover is done at the
woken worker's ``journaled`` kill point, with the calls the other worker makes (``interrupt``: FAIL
and queue again; then, in one case, the retry asked and told as measured)."""

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
from tuner.engine.records import load_records, merge_repeats
from tuner.engine.runner import run_study
from tuner.engine.study import create_study
from tuner.engine.workers import interrupt


def take_over(storage: str, name: str, measure_retry: bool) -> dict:
    """What the other worker does to the RUNNING trial: fail it as dead and queue its setting; with
    ``measure_retry``, also start the retry and tell it measured (figures of its own)."""
    study = optuna.load_study(study_name=name, storage=storage)
    (dead,) = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    assert interrupt(study, dead._trial_id, "its worker stopped answering (test)")
    done = {"failed": dead.number}
    if measure_retry:
        retry = ask(study)
        assert retry.user_attrs.get("retry_of") == dead.number
        for key in ("requested", "effective", "effective_key", "rewritten"):
            retry.set_user_attr(key, dead.user_attrs.get(key))
        retry.set_user_attr("status", "measured")
        tell(study, retry.number, [1.5] * len(study.directions))
        done["retry"] = retry.number
    return done


@pytest.mark.parametrize("measure_retry", [True, False],
                         ids=["retry-measured-meanwhile", "retry-still-queued"])
def test_a_measurement_rehomed_after_a_takeover_says_where_it_went_and_whether_it_is_a_repeat(
        tmp_path, monkeypatch, measure_retry):
    path = tmp_path / "demo.yaml"  # no seed trials: the retry is the only queued trial
    path.write_text(STUDY.format(name="demo", space=SPACE, profile="k2.6-tp8-pcie", args="",
                                 seeds="default_seed_trials: false\n"))
    config = load_study(path)
    create_study(config, config.storage)
    seen: dict = {}

    def at(name: str) -> None:
        if name == "journaled" and not seen:  # the first trial's measurement is journaled, not stored
            seen.update(take_over(config.storage, config.name, measure_retry))

    monkeypatch.setattr(finish_module, "kill_point", at)
    events: list = []
    run_study(config, config.storage, ModelBackend("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1),
              n_trials=1, on_event=lambda kind, info: events.append((kind, info)))
    assert seen, "no trial reached its journal entry"
    study = optuna.load_study(study_name=config.name, storage=config.storage)
    (copy,) = [t for t in study.trials if t.user_attrs.get("replayed_from") == seen["failed"]]
    assert study.trials[seen["failed"]].state == TrialState.FAIL
    # the woken worker's lines: where the figures went, and the trial that holds them
    warned = [i["message"] for k, i in events if k == "warning" and i.get("trial") == seen["failed"]]
    assert any(f"stored as trial {copy.number}" in m for m in warned), events
    done = [i for k, i in events if k == "trial_done"]
    assert [d["trial"] for d in done][:1] == [copy.number], done
    assert seen["failed"] not in [d["trial"] for d in done], done
    if measure_retry:
        # a repeat of the setting the retry measured first, marked as one and averaged with it
        assert copy.user_attrs.get("remeasure_of") == seen["retry"], copy.user_attrs
        (merged,) = [r for r in merge_repeats(load_records(study))
                     if copy.number in r.attrs.get("measured_in", ())]
        assert merged.attrs["measured_in"] == [seen["retry"], copy.number]
    else:
        # the setting's first reading: nothing to repeat (the queued retry reuses it)
        assert copy.user_attrs.get("remeasure_of") is None, copy.user_attrs
