"""The report's summary splits the measured trials by the study's limits in words that agree with
their counts. QA: ``Of the 4 measured, 1 meet the study's limits (1 distinct settings) and 3 break
them``."""

from __future__ import annotations

from types import SimpleNamespace

from tuner.engine.records import MEASURED
from tuner.results.report import measured_text


def _data(meeting: int, breaking: int):
    records = [SimpleNamespace(status=MEASURED, feasible=True)] * meeting + \
        [SimpleNamespace(status=MEASURED, feasible=False)] * breaking
    return SimpleNamespace(records=records, measured=records[:meeting], front=records[:meeting])


def test_one_of_each_is_said_in_the_singular():
    text = measured_text(_data(1, 3))
    assert text.startswith("Of the 4 measured, 1 meets the study's limits (1 distinct setting) "
                           "and 3 break them "), text
    assert measured_text(_data(4, 1)).startswith(
        "Of the 5 measured, 4 meet the study's limits (4 distinct settings) and 1 breaks them ")
