"""Picks when front points tie exactly (tuner/results/pareto.py): an extreme tied on its objective and
on the others goes to the lower trial number, as the module docstring says, whatever order the points
come in; a study without a single-request objective falls back to its first objective for the
report's single pick."""

from __future__ import annotations

from tuner.results.pareto import extreme_index, single_objective, throughput_objective


def test_an_extreme_tied_on_every_objective_goes_to_the_lower_trial_number():
    values = [(2.0, 1.5), (2.0, 1.5), (1.0, 3.0)]
    assert extreme_index(values, 0, numbers=[7, 3, 9]) == 1
    assert extreme_index(values, 0, numbers=[3, 7, 9]) == 0
    # without numbers, the index stands for the trial number
    assert extreme_index(values, 0) == 0


def test_without_a_single_request_objective_the_report_s_single_pick_is_the_first_objective():
    # the module docstring: picks() falls back to the first objective for "single" and the last for
    # "throughput" (export and confirm refuse the name instead: absent_pick)
    objectives = ["speedup@8", "speedup@32"]
    assert single_objective(objectives) == "speedup@8"
    assert single_objective(["single_speedup", "speedup@32"]) == "single_speedup"
    assert throughput_objective(["single_speedup", "single_tok_per_s"]) == "single_tok_per_s"
