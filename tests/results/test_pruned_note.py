"""How status and the report say why a trial was pruned, when its stage was never stored."""

from __future__ import annotations

from tuner.results.status import pruned_note


def test_a_pruned_trial_without_a_stage_does_not_read_stopped_after_none():
    # a PRUNED trial told by another tool (or edited) has no pruned_at (QA: "stopped after None")
    assert pruned_note({"pruned_at": None, "pruned_by": None}) == "stopped early (stage not recorded)"
    assert pruned_note({"pruned_by": 4}) == "stopped early (stage not recorded): trial 4 dominates it"
    stored = {"pruned_at": "single 1/3", "pruned_by": 4}
    assert pruned_note(stored) == "stopped after single 1/3: trial 4 dominates it"
