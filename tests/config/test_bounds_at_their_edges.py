"""Config bounds at their edges (tuner/config/study.py): a bare companion suffix names no companion; a
budget raised to exactly MAX_TRIALS is allowed (one more is refused naming --add-trials), and so is a
study file's n_trials of exactly MAX_TRIALS; a trial timeout no longer than the server's start-up
timeout is refused; an ITL limit needs swept requests of two tokens at least (one gap), and two are
enough; an objective named twice is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from tuner.config.study import MAX_TRIALS, check_added_budget, companion_of
from tuner.config.yamlfile import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def test_a_companion_is_a_study_name_and_its_suffix():
    assert companion_of("demo.baseline") == ("demo", "baseline")
    assert companion_of("demo.confirm") == ("demo", "confirmation")
    # the suffix alone is no study's companion (there is no study named "")
    assert companion_of(".baseline") is None and companion_of(".confirm") is None
    assert companion_of("demo") is None


def test_a_budget_may_be_raised_to_exactly_max_trials():
    check_added_budget("s", MAX_TRIALS - 10, 10)
    with pytest.raises(ConfigError) as exc:
        check_added_budget("s", MAX_TRIALS - 10, 11)
    assert str(exc.value).startswith("--add-trials") and "add at most 10" in str(exc.value)


def _demo(tmp_path, **edits):
    import yaml

    from tuner.config.study import load_study

    data = yaml.safe_load((ROOT / "studies" / "sim-demo.yaml").read_text())
    for dotted, value in edits.items():  # section__key, or a top-level key
        if "__" in dotted:
            section, key = dotted.split("__")
            data[section][key] = value
        else:
            data[dotted] = value
    path = tmp_path / "sim-demo.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return lambda: load_study(path)


def test_a_trial_timeout_equal_to_the_startup_timeout_is_refused(tmp_path):
    # a trial's deadline counts the server's start-up: one no longer than it leaves no time to measure
    load = _demo(tmp_path, server__startup_timeout_s=60, bench__trial_timeout="1m")
    with pytest.raises(ConfigError) as exc:
        load()
    assert "bench.trial_timeout (1m) must exceed server.startup_timeout_s (60 s)" in str(exc.value)
    assert _demo(tmp_path, server__startup_timeout_s=60, bench__trial_timeout="61s")().bench.trial_timeout_s == 61


@pytest.mark.parametrize("tokens, refused", [(2, False), (1, True)])
def test_an_itl_limit_needs_two_tokens_per_swept_request_and_two_are_enough(tmp_path, tokens, refused):
    # two tokens have one gap between them: ITL is measured; one token has none
    suite = {"name": "s", "prompts": [{"name": "a", "text": "hello"}], "single": {"lengths": [8], "repeats": 1},
             "sweep": {"concurrencies": [32], "max_tokens": tokens}, "warmup": {"requests": 0}}
    load = _demo(tmp_path, bench__suite=suite, bench__stream=True, slo=[{"concurrency": 32, "itl_p99_ms": 100}])
    if refused:
        with pytest.raises(ConfigError) as exc:
            load()
        assert "slo[0].itl_p99_ms" in str(exc.value) and "generates 1 token" in str(exc.value)
    else:
        assert load().slo_at(32).limits == {"itl_p99_ms": 100}


def test_a_study_file_may_give_exactly_max_trials_launches(tmp_path):
    assert _demo(tmp_path, budget__n_trials=MAX_TRIALS)().budget.n_trials == MAX_TRIALS
    with pytest.raises(ConfigError) as exc:
        _demo(tmp_path, budget__n_trials=MAX_TRIALS + 1)()
    assert "budget.n_trials" in str(exc.value) and f"give at most {MAX_TRIALS}" in str(exc.value)


def test_an_objective_named_twice_is_refused(tmp_path):
    with pytest.raises(ConfigError) as exc:
        _demo(tmp_path, objectives=["single_speedup", "speedup@32", "single_speedup"])()
    assert "objectives" in str(exc.value) and "must not repeat" in str(exc.value)
