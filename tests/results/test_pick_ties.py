"""Picks when front points tie exactly (tuner/results/pareto.py): an extreme tied on its objective and
on the others goes to the lower trial number, as the module docstring says, whatever order the points
come in."""

from __future__ import annotations

from tuner.results.pareto import extreme_index


def test_an_extreme_tied_on_every_objective_goes_to_the_lower_trial_number():
    values = [(2.0, 1.5), (2.0, 1.5), (1.0, 3.0)]
    assert extreme_index(values, 0, numbers=[7, 3, 9]) == 1
    assert extreme_index(values, 0, numbers=[3, 7, 9]) == 0
    # without numbers, the index stands for the trial number
    assert extreme_index(values, 0) == 0
