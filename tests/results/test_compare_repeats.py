"""`tuner study compare`, `list` and the report's Pareto chart read a setting measured more than once
at the mean of its readings, as the front, status, pareto and export do
(tuner.engine.records.merge_repeats)."""

from __future__ import annotations

import optuna
import pytest
from optuna.trial import create_trial

from tuner.engine.records import MEASURED, PRUNED
from tuner.results.compare import compare_studies

EFFECTIVE = {"a": {"num_steps": 5, "eagle_topk": 4, "num_draft_tokens": 32},
             "b": {"num_steps": 4, "eagle_topk": 8, "num_draft_tokens": 32},
             "c": {"num_steps": 6, "eagle_topk": 8, "num_draft_tokens": 32}}


def study_of(readings) -> optuna.Study:
    study = optuna.create_study(directions=["maximize", "maximize"])
    study.set_metric_names(["single_speedup", "speedup@32"])
    study.set_user_attr("tuner_config", {"objectives": ["single_speedup", "speedup@32"],
                                         "server": {"backend": "model"}})
    for key, values in readings:
        attrs = {"status": MEASURED, "effective_key": key, "effective": EFFECTIVE[key]}
        study.add_trial(create_trial(values=values, user_attrs=attrs, system_attrs={"constraints": [0.0]}))
    return study


def test_the_best_and_the_common_settings_are_the_mean_of_a_setting_s_readings():
    """QA: compare named as best single_speedup a setting's lucky first reading (trial 14, 3.185),
    while its own front showed that setting at the mean of its two readings (3.11) and another on
    top; the common settings' ratios read first readings too."""
    a = study_of([("a", [3.2, 0.25]), ("b", [3.1, 0.25]), ("a", [2.9, 0.25])])
    b = study_of([("a", [3.0, 0.25]), ("b", [3.0, 0.25])])
    got = compare_studies(a, b)
    best = got["a"]["best"]["single_speedup"]
    assert (best["setting"], best["value"]) == ("4,8,32", 3.1)
    assert [f["trial"] for f in got["a"]["front"]] == [1]
    common = {c["setting"]: c for c in got["common"]}
    assert common["5,4,32"]["values_a"] == pytest.approx([3.05, 0.25])
    assert common["5,4,32"]["ratio_b_over_a"][0] == pytest.approx(3.0 / 3.05)


def test_the_list_s_best_is_the_mean_of_a_setting_s_readings():
    from tuner.results.catalog import study_summary

    a = study_of([("a", [3.2, 0.25]), ("b", [3.1, 0.25]), ("a", [2.9, 0.25])])
    assert study_summary(a)["best"]["single_speedup"] == 3.1


def test_a_pruned_trial_is_neither_best_nor_common():
    a = study_of([("a", [2.0, 0.25])])
    a.add_trial(create_trial(state=optuna.trial.TrialState.PRUNED, user_attrs={
        "status": PRUNED, "effective_key": "c", "effective": EFFECTIVE["c"], "pruned_at": "probe",
        "partial": {"single_tok_per_s": 99.0}}, intermediate_values={0: 9.0, 1: 9.0}))
    b = study_of([("a", [2.0, 0.25]), ("c", [2.5, 0.3])])
    got = compare_studies(a, b)
    assert got["a"]["best"]["single_speedup"]["setting"] == "5,4,32"
    assert [c["setting"] for c in got["common"]] == ["5,4,32"]


def test_the_report_s_chart_shows_a_setting_off_the_front_at_its_mean():
    """QA: the report's Pareto chart drew a setting measured twice at its first reading (3.185,
    0.255) as a "measured" point, beyond the front point it no longer beats at its mean (trial 21,
    3.179, 0.248): a point off the front that dominates the front."""
    from tuner.results.report_data import load_report_data
    from tuner.results.report_plots import pareto_chart

    study = study_of([("a", [3.2, 0.26]), ("b", [3.1, 0.25]), ("a", [2.9, 0.24]), ("c", [3.0, 0.30])])
    chart = pareto_chart(load_report_data(study))
    series = {s.name: s for s in chart.panels[0].series}
    front = list(zip(series["Pareto front"].x, series["Pareto front"].y))
    others = list(zip(series["measured"].x, series["measured"].y))
    assert others == [(pytest.approx(3.05), pytest.approx(0.25))]
    assert not any(x > fx and y > fy for x, y in others for fx, fy in front)
