"""The lossless check reads the baseline's stored single-request outputs (``single_outputs``,
tuner/engine/limits.py). QA (qa191): that attribute edited by hand (``"abc"``, a list, an output
that is no text) ended every later ``tuner study run`` in AttributeError or TypeError from the
check, after its first trial's whole suite: that measurement was lost (the trial interrupted and
its setting queued again, to be measured and lost again by the next run). Only a mapping's text
outputs are compared; anything else compares nothing, as a baseline with no outputs."""

from __future__ import annotations

import pytest

from tuner.bench.records import RequestRecord
from tuner.bench.result import SuiteResult
from tuner.engine.limits import OUTPUTS_ATTR, lossless_attrs


def _trial() -> SuiteResult:
    """A trial's figures with two single requests, greedy (temperature 0, the suites' default)."""
    recs = [RequestRecord("single", "fib", 8, ok=True, completion_tokens=8, output_text="abcdefgh"),
            RequestRecord("single", "json", 8, ok=True, completion_tokens=8, output_text="abcdefgh")]
    return SuiteResult(suite={"name": "t"}, records=recs, complete=True)


@pytest.mark.parametrize("stored", ["abc", ["abcdefgh"], 5, {"fib@8": 5, "json@8": None}])
def test_baseline_outputs_that_are_no_mapping_of_text_compare_nothing(stored):
    assert lossless_attrs(_trial(), {OUTPUTS_ATTR: stored}, 0.9, enforce=True) == {}


def test_the_text_outputs_of_a_partly_edited_mapping_are_still_compared():
    attrs = lossless_attrs(_trial(), {OUTPUTS_ATTR: {"fib@8": "abcdefgh", "json@8": ["x"]}}, 0.9, enforce=True)
    assert attrs["lossless_compared"] == 1 and attrs["lossless_identical"] == 1
    assert attrs["lossless_share"] == 1.0 and attrs["lossless_flag"] is False
    # and an untouched mapping is checked as before: one of two outputs differs
    both = lossless_attrs(_trial(), {OUTPUTS_ATTR: {"fib@8": "abcdefgh", "json@8": "abcXefgh"}}, 0.9, enforce=True)
    assert both["lossless_compared"] == 2 and both["lossless_share"] == 0.5 and both["lossless_flag"] is True
