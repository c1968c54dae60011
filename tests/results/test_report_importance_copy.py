"""The in-memory copy of a study that Optuna's importance plots are drawn from
(:func:`tuner.results.report.measured_study`) holds the trials' numbers, states, values, params and
distributions, and none of their attributes.

Optuna's ``plot_param_importances`` deep-copies every trial of that copy three times per objective
(``_get_distribution`` reads ``study.trials``); with each trial's stored figures, stages and worker
in the copy, a report of 10,000 trials spent 11 s of CPU drawing its figures, 5.7 s without them
(QA, qa177). The stored study is left as it was.
"""

from optuna.trial import TrialState

from support.model_study import make_model_study
from tuner.config.study import load_study
from tuner.engine.records import MEASURED, REUSED
from tuner.engine.study import open_study
from tuner.results.report import measured_study
from tuner.results.report_data import load_report_data


def test_the_importance_copy_keeps_values_and_params_but_no_attributes(tmp_path):
    config = load_study(make_model_study(tmp_path, "copy", n_trials=4))
    data = load_report_data(open_study("copy", config.storage))
    stored = {t.number: t for t in data.study.get_trials(deepcopy=False)}
    keep = {r.number for r in data.records if r.status in (MEASURED, REUSED) and r.feasible}
    assert keep and set(stored) - keep  # measured ones, and the seeded invalid one
    before = {n: dict(t.user_attrs) for n, t in stored.items()}
    copied = measured_study(data).get_trials(deepcopy=False)
    assert [t.number for t in copied] == sorted(stored)
    for t in copied:
        assert (t.user_attrs, t.system_attrs) == ({}, {}), t.number
        assert (t.params, t.distributions) == (stored[t.number].params, stored[t.number].distributions)
        if t.number in keep:
            assert (t.state, t.values) == (TrialState.COMPLETE, stored[t.number].values)
        else:
            assert (t.state, t.values) == (TrialState.FAIL, None)
    assert {t.number: t.user_attrs for t in data.study.get_trials(deepcopy=False)} == before  # untouched
    assert all(before.values())
