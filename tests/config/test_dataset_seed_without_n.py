"""A dataset's ``seed`` given without ``n`` is refused: every row is drawn then, in the file's order,
so the seed chooses nothing (QA: ``seed: 0``, ``1`` and ``2`` sent the same requests, the file's
first rows, silently). With ``n`` the seed chooses, as the README's draw says."""

import json

import pytest

from tuner.config.suite import load_suite
from tuner.config.yamlfile import ConfigError

ROWS = [{"id": f"r{i}", "prompt": f"request number {i}"} for i in range(20)]


def _suite_file(tmp_path, dataset: dict):
    (tmp_path / "d.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    (tmp_path / "s.yaml").write_text(json.dumps({"name": "s", "dataset": {"path": "d.jsonl", **dataset},
                                                 "single": {"prompts": 4}, "sweep": {"concurrencies": [4]}}))
    return tmp_path / "s.yaml"


def test_a_seed_without_n_is_refused_with_the_fix(tmp_path):
    with pytest.raises(ConfigError) as err:
        load_suite(_suite_file(tmp_path, {"seed": 1}))
    assert str(err.value) == (
        f"{tmp_path / 's.yaml'}: dataset.seed: 1 without dataset.n chooses nothing: every row is drawn, in the "
        "file's order, so the single phase and each sweep batch take the file's first rows whatever the seed; "
        "give n (e.g. n: 20, every row, in the seed's order) for the seed to choose, or drop seed")


def test_with_n_the_seed_chooses_which_requests_are_sent_first(tmp_path):
    firsts = {seed: [p.name for p in load_suite(_suite_file(tmp_path, {"seed": seed, "n": 20})).prompts[:4]]
              for seed in (0, 1)}
    assert firsts[0] != firsts[1]
    # the fix the line gives: n of every row, in the seed's order: the same rows, another order
    assert sorted(p.name for p in load_suite(_suite_file(tmp_path, {"seed": 1, "n": 20})).prompts) == \
        sorted(r["id"] for r in ROWS)


@pytest.mark.parametrize("dataset", [{}, {"seed": 0}])
def test_no_seed_or_the_default_one_without_n_reads_the_file_in_order(tmp_path, dataset):
    assert [p.name for p in load_suite(_suite_file(tmp_path, dataset)).prompts] == [r["id"] for r in ROWS]
