"""What a study file's change of its budget says (tuner.engine.study._budget_change): every knob that
changed, with its old and new value."""

from __future__ import annotations

from tuner.engine.study import _budget_change

PRUNE = {"enabled": True, "startup_trials": 4, "z": 3.5, "margin": 0.01}


def config(**budget) -> dict:
    return {"name": "s", "budget": {"n_trials": 10, "timeout": None, "prune": PRUNE, **budget}}


def test_a_change_of_pruning_s_knobs_names_the_knob():
    """QA: z 3.5 -> 2.0 in the file was said as "budget.prune True -> True": it named no change."""
    _, said = _budget_change(config(), config(prune={**PRUNE, "z": 2.0}))
    assert said == "budget.prune.z 3.5 -> 2.0"
    _, said = _budget_change(config(), config(prune={**PRUNE, "startup_trials": 6, "margin": 0.02}))
    assert said == "budget.prune.startup_trials 4 -> 6, budget.prune.margin 0.01 -> 0.02"


def test_the_switch_is_said_as_before():
    _, said = _budget_change(config(), config(prune={**PRUNE, "enabled": False}))
    assert said == "budget.prune True -> False"
    _, said = _budget_change(config(), config(n_trials=12, timeout="8h"))
    assert said == "budget.n_trials 10 -> 12, budget.timeout none -> 8h"


def test_a_knob_changed_with_the_switch_is_said_too():
    """QA: pruning off, then `prune: {z: 2.0}` in the file said "budget.prune False -> True" alone,
    and the z the study now prunes with went unsaid."""
    _, said = _budget_change(config(prune={**PRUNE, "enabled": False}), config(prune={**PRUNE, "z": 2.0}))
    assert said == "budget.prune False -> True, budget.prune.z 3.5 -> 2.0"
