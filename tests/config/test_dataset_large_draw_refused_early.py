"""A draw :func:`refuse_large_draw_without_n` refuses is refused as soon as the file has given more rows than
the limit (and than the suite sends), the rest of the file unread (QA qa207: a 100 MB log was read, parsed and
checked whole, 79 s and 867 MB, to be refused at the end). Shown by what follows the limit: a row no check
would take there is never reached by a refused draw, and is still refused whenever the draw goes on."""

import json
import subprocess
import sys

import pytest

from tuner.config.suite import MAX_DRAWN_WITHOUT_N, TooManySinglePrompts, load_suite
from tuner.config.yamlfile import ConfigError

ROWS = MAX_DRAWN_WITHOUT_N + 1


def _data(folder) -> None:
    good = "".join(json.dumps({"prompt": f"request number {i}", "max_tokens": 16}) + "\n" for i in range(ROWS))
    (folder / "d.jsonl").write_text(good + "this line is no JSON\n")  # line ROWS + 1


def _suite(folder, **keys) -> None:
    data = {"name": "s", "dataset": {"path": "d.jsonl", **keys.pop("dataset", {})},
            "single": {"prompts": 2, "repeats": 1}, "sweep": {"concurrencies": [1, 8]}, **keys}
    (folder / "s.yaml").write_text(json.dumps(data))


def test_a_refused_draw_stops_at_the_limit_and_says_more_than(tmp_path):
    _data(tmp_path)
    _suite(tmp_path)
    with pytest.raises(TooManySinglePrompts) as err:  # (not the bad line after the limit: it was not read)
        load_suite(tmp_path / "s.yaml")
    assert err.value.key == "dataset.n"
    assert f"every one of the more than {MAX_DRAWN_WITHOUT_N:,} requests in d.jsonl" in err.value.message


@pytest.mark.parametrize("keys", [{"dataset": {"n": 8}}, {"single": {"prompts": ROWS + 1, "repeats": 1}}])
def test_a_draw_that_is_taken_still_reads_and_checks_every_row(tmp_path, keys):
    _data(tmp_path)
    _suite(tmp_path, **keys)
    with pytest.raises(ConfigError) as err:
        load_suite(tmp_path / "s.yaml")
    assert not isinstance(err.value, TooManySinglePrompts)
    assert err.value.key == f"line {ROWS + 1}" and "not valid JSON" in err.value.message, err.value


def test_a_study_file_inline_suite_is_refused_early_naming_its_key(tmp_path):
    _data(tmp_path)
    (tmp_path / "study.yaml").write_text(
        "name: big\nsearch_space: eagle3\nserver: {backend: sim, model_path: moonshotai/Kimi-K2.6,\n"
        "  draft_model_path: sim/kimi-k2.6-eagle3, tp_size: 8, sim: {profile: k2.6-tp8-pcie}}\n"
        "bench:\n  suite: {name: big, dataset: {path: d.jsonl}, single: {prompts: 2}, sweep: {concurrencies: [1, 8]}}\n"
        "objectives: [single_speedup]\nbudget: {n_trials: 1}\n")
    before = sorted(p.name for p in tmp_path.iterdir())
    r = subprocess.run([sys.executable, "-m", "tuner", "study", "create", "study.yaml"], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"error: {tmp_path / 'study.yaml'}: bench.suite.dataset.n: not given, so every one of the more than "
        f"{MAX_DRAWN_WITHOUT_N:,} requests in d.jsonl is drawn"), lines
    assert sorted(p.name for p in tmp_path.iterdir()) == before
