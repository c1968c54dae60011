"""What `study run` says of a budget changed in the file, and of --add-trials on a study with no
launch budget (QA, qa139: a removed timeout read `budget.timeout 2h -> None`; a study bounded by its
timeout was said to run "until stopped")."""

import pytest

from tuner.config.yamlfile import ConfigError
from tuner.engine.study import _budget_change, _check_extension

CONFIG = {"name": "s", "search_space": "eagle3", "server": {"backend": "model"}}


def _said(old: dict, new: dict) -> str:
    change = _budget_change({**CONFIG, "budget": old}, {**CONFIG, "budget": new})
    assert change is not None
    return change[1]


def test_a_timeout_added_or_taken_out_is_said_in_words():
    assert "budget.timeout none -> 2h" in _said({"n_trials": 16}, {"n_trials": 16, "timeout": "2h"})
    said = _said({"n_trials": 16, "timeout": "2h"}, {"n_trials": 16})
    assert "budget.timeout 2h -> none" in said and "None" not in said, said


def test_add_trials_to_a_study_without_a_launch_budget_names_its_timeout_too():
    with pytest.raises(ConfigError) as e:
        _check_extension("s", None, 3)
    assert "no launch budget (its timeout bounds a run, or it runs until stopped)" in str(e.value), str(e.value)
