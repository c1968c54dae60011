"""A dataset of more than ``MAX_DRAWN_WITHOUT_N`` rows given without ``dataset.n``, where a measurement
sends only some of them, is refused with the fix (give n), before anything is written (QA qa207: a
100 MB log of 371,751 rows, ``single.prompts: 2`` and a sweep up to C=32, was drawn whole and stored
with the study, 124 MB, of which 32 requests were ever sent, the file's first rows: `study create` took
79 s and 867 MB, `study status` 57 s). A suite that says how many, or that sends every row, is taken."""

import json

import pytest
from support.inline_suite_study import refused_create

from tuner.config.suite import MAX_DRAWN_WITHOUT_N, TooManySinglePrompts, load_suite

ROWS = MAX_DRAWN_WITHOUT_N + 1


def _data(folder, rows: int = ROWS) -> None:
    (folder / "d.jsonl").write_text("".join(json.dumps({"prompt": f"request number {i}", "max_tokens": 16}) + "\n"
                                            for i in range(rows)))


def _suite(folder, **keys) -> None:
    data = {"name": "s", "dataset": {"path": "d.jsonl", **keys.pop("dataset", {})},
            "single": {"prompts": 2, "repeats": 1}, "sweep": {"concurrencies": [1, 8]}, **keys}
    (folder / "s.yaml").write_text(json.dumps(data))


def test_a_large_draw_of_which_a_few_are_sent_is_refused_with_n_as_the_fix(tmp_path):
    _data(tmp_path)
    _suite(tmp_path)
    with pytest.raises(TooManySinglePrompts) as err:
        load_suite(tmp_path / "s.yaml")
    assert str(err.value) == (
        f"{tmp_path / 's.yaml'}: dataset.n: not given, so every one of the more than {ROWS - 1:,} requests in d.jsonl "
        "is drawn "
        "and stored with the study (each command that loads the suite reads them all again), and a measurement "
        "sends only the first 8 of them, the file's first rows: give n, the requests to draw (e.g. n: 8; "
        "dataset.seed chooses them across the whole file)")


def test_without_single_prompts_the_one_refusal_is_n(tmp_path):
    # single.prompts not given: the other check's fix (single.prompts: 8) would lead to this one
    _data(tmp_path)
    _suite(tmp_path, single={"repeats": 2})
    with pytest.raises(TooManySinglePrompts) as err:
        load_suite(tmp_path / "s.yaml")
    assert err.value.key == "dataset.n"
    assert ("a measurement sends each of them alone in the single phase (single.prompts not given), 2 times, in "
            "every trial and the baseline: give n, the requests to draw (e.g. n: 64;") in err.value.message


@pytest.mark.parametrize("keys", [
    {"dataset": {"n": 8}},                                        # n drawn
    {"dataset": {"n": ROWS}},                                     # every row, asked for
    {"single": {"prompts": ROWS, "repeats": 1}},                  # every row sent alone, asked for
    {"single": {"lengths": []}, "sweep": {"concurrencies": [ROWS]}},  # a sweep batch that sends every row
])
def test_a_suite_that_says_how_many_or_sends_every_row_is_taken(tmp_path, keys):
    _data(tmp_path)
    _suite(tmp_path, **keys)
    assert len(load_suite(tmp_path / "s.yaml").prompts) == keys.get("dataset", {}).get("n", ROWS)


def test_a_draw_at_the_limit_is_taken(tmp_path):
    _data(tmp_path, MAX_DRAWN_WITHOUT_N)
    _suite(tmp_path)
    assert len(load_suite(tmp_path / "s.yaml").prompts) == MAX_DRAWN_WITHOUT_N


def test_a_study_with_such_an_inline_suite_is_refused_and_nothing_written(tmp_path):
    _data(tmp_path)
    line = refused_create(tmp_path, "big", "{name: big, dataset: {path: d.jsonl}, single: {prompts: 2}, "
                                           "sweep: {concurrencies: [1, 8]}}", timeout=300)
    assert line.startswith(
        f"error: {tmp_path / 'study.yaml'}: bench.suite.dataset.n: not given, so every one of the more than "
        f"{ROWS - 1:,} requests in d.jsonl is drawn"), line
    # a study created before the check goes on by name, as the line says
    assert line.endswith("; a study created with it before this check runs by name: tuner study run --study "
                         "NAME --storage URL"), line
