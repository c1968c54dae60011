"""A suite drawing more than ``MAX_IMPLICIT_SINGLE_PROMPTS`` requests from a dataset without
``single.prompts`` is refused, naming how many single requests every trial would send one at a time
and the fix (QA: a file of 3,000 rows and no ``single.prompts`` planned 9,000 single requests a
trial, and `tuner study run` sat at "baseline (autoregressive): launching" with nothing said).
``single.prompts`` given, any number of drawn requests is taken; a study's inline suite is refused
the same way, before anything is written."""

import json

import pytest
from support.inline_suite_study import refused_create

from tuner.config.suite import MAX_IMPLICIT_SINGLE_PROMPTS, load_suite
from tuner.config.yamlfile import ConfigError

ROWS = MAX_IMPLICIT_SINGLE_PROMPTS + 1


def _data(folder, rows: int = ROWS) -> None:
    (folder / "d.jsonl").write_text("".join(json.dumps({"prompt": f"request number {i}"}) + "\n" for i in range(rows)))


def test_every_drawn_request_measured_alone_by_default_is_refused(tmp_path):
    _data(tmp_path)
    (tmp_path / "s.yaml").write_text("name: s\ndataset: {path: d.jsonl}\nsingle: {lengths: [64, 256]}\n")
    with pytest.raises(ConfigError) as err:
        load_suite(tmp_path / "s.yaml")
    assert str(err.value) == (
        f"{tmp_path / 's.yaml'}: single.prompts: not given, so each of the {ROWS} requests drawn from d.jsonl is "
        f"measured alone in every run of the suite (each trial's, the baseline's: {ROWS * 2 * 3} single requests "
        f"one at a time, single.repeats 3): give single.prompts, the first N drawn (e.g. 8), or dataset.n; or single.prompts: "
        f"{ROWS} to measure them all")


@pytest.mark.parametrize("suite", [
    {"single": {"prompts": 8}},                      # the first 8 drawn
    {"single": {"prompts": ROWS}},                   # all of them, asked for
    {"dataset": {"n": MAX_IMPLICIT_SINGLE_PROMPTS}},  # fewer drawn
    {"single": {"lengths": []}, "sweep": {"concurrencies": [8]}},  # no single request at all
])
def test_a_suite_that_says_how_many_is_taken(tmp_path, suite):
    _data(tmp_path)
    data = {"name": "s", "dataset": {"path": "d.jsonl", **suite.get("dataset", {})},
            **{k: v for k, v in suite.items() if k != "dataset"}}
    (tmp_path / "s.yaml").write_text(json.dumps(data))
    loaded = load_suite(tmp_path / "s.yaml")
    assert len(loaded.prompts) == suite.get("dataset", {}).get("n", ROWS)


def test_a_study_with_such_an_inline_suite_is_refused_and_nothing_written(tmp_path):
    _data(tmp_path)
    line = refused_create(tmp_path, "big", "{name: big, dataset: {path: d.jsonl}, sweep: {concurrencies: [1]}}")
    assert line.startswith(f"error: {tmp_path / 'study.yaml'}: bench.suite.single.prompts: "
                           f"not given, so each of the {ROWS} requests"), line
    # a study created before the check goes on by name, as the line says
    assert line.endswith("; a study created with it before this check runs by name: tuner study run --study "
                         "NAME --storage URL"), line


def test_a_draw_whose_n_drew_them_is_told_a_smaller_n(tmp_path):
    # dataset.n given (every row of 101): "or dataset.n" was no fix (QA qa152); a smaller n is
    _data(tmp_path)
    (tmp_path / "s.yaml").write_text(f"name: s\ndataset: {{path: d.jsonl, n: {ROWS}, seed: 3}}\n")
    with pytest.raises(ConfigError) as err:
        load_suite(tmp_path / "s.yaml")
    assert f"give single.prompts, the first N drawn (e.g. 8), or a dataset.n below {ROWS}; or " in str(err.value)
