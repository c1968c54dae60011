"""`tuner study compare` warns when the two studies' suites send other requests, also where the
workload summary (suite name, prompt names, lengths, concurrencies) reads alike."""

from __future__ import annotations

import copy

import optuna
from optuna.trial import create_trial

from tuner.config.suite import load_suite
from tuner.engine.records import MEASURED
from tuner.engine.study import SUITE_ATTR
from tuner.results.compare import compare_studies

EFFECTIVE = {"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}


def quick() -> dict:
    return load_suite("quick").model_dump(mode="json")


def study_with(suite: dict) -> optuna.Study:
    study = optuna.create_study(directions=["maximize", "maximize"])
    study.set_metric_names(["single_speedup", "speedup@32"])
    study.set_user_attr("tuner_config", {"objectives": ["single_speedup", "speedup@32"],
                                         "server": {"backend": "model"}})
    study.set_user_attr(SUITE_ATTR, suite)
    study.add_trial(create_trial(values=[2.0, 0.9], system_attrs={"constraints": [0.0]},
                                 user_attrs={"status": MEASURED, "effective_key": "3-1-4", "effective": EFFECTIVE}))
    return study


def test_the_same_prompt_names_over_other_text_and_temperature_are_named():
    """QA: study B's inline suite was `quick` with every prompt's text replaced and temperature 0.7;
    `compare` printed no warning (its workload rows read alike: suite quick, prompts fib/json/haiku)
    and set B's figures over A's as if both had measured the same requests."""
    other = quick()
    other["temperature"] = 0.7
    for p in other["prompts"]:
        p["text"] = "Say hello in French, twice please."
    got = compare_studies(study_with(quick()), study_with(other))
    assert got["a"]["workload"] == got["b"]["workload"]
    assert got["warnings"] == ["the workloads differ (suite.prompts, suite.temperature): figures measure "
                               "different things"]


def test_a_difference_the_workload_rows_show_is_named_once_and_one_that_shapes_no_figure_not_at_all():
    other = quick()
    other["sweep"]["concurrencies"] = [1, 32]
    other["sweep"]["repeats"] = 3
    other["timeout_s"] = 900.0
    other["warmup"] = {"requests": 4, "max_tokens": 16}
    got = compare_studies(study_with(quick()), study_with(other))
    assert got["warnings"] == ["the workloads differ (concurrencies, suite.sweep.repeats): figures measure "
                               "different things"]


def test_the_same_suite_warns_of_nothing():
    assert compare_studies(study_with(quick()), study_with(copy.deepcopy(quick())))["warnings"] == []


def test_one_dataset_file_in_two_folders_is_the_same_workload_and_another_file_is_not():
    def with_dataset(path: str, sha: str) -> dict:
        suite = quick()
        suite["dataset"] = {"path": path, "format": "jsonl", "n": 3, "seed": 0, "sha256": sha}
        return suite

    a = study_with(with_dataset("/node1/data/r.jsonl", "a" * 64))
    assert compare_studies(a, study_with(with_dataset("/node2/r.jsonl", "a" * 64)))["warnings"] == []
    assert compare_studies(a, study_with(with_dataset("/node1/data/r.jsonl", "b" * 64)))["warnings"] == [
        "the workloads differ (suite.dataset.sha256): figures measure different things"]


def test_a_key_an_older_tuner_did_not_store_is_its_default_not_a_difference():
    """A study made before the suite had `flush_cache` and `adaptive` stored neither; compared with
    one of this tuner's, that is no other workload."""
    older = quick()
    del older["flush_cache"], older["adaptive"]
    assert compare_studies(study_with(older), study_with(quick()))["warnings"] == []
    older["temperature"] = 0.5
    assert compare_studies(study_with(older), study_with(quick()))["warnings"] == [
        "the workloads differ (suite.temperature): figures measure different things"]
