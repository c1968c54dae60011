"""A duration hint (an ISO 8601 duration ``PT8H``, days ``7d``) says what to write in a form the
parser then takes: never an exponent (QA, qa174: ``PT0.0000001S`` was told ``write 1e-07s``, and
``--timeout P100000D`` ``write 2.4e+06h``, both refused when written), and for more than a year the
year limit itself, not a hint the next try is refused for (``P400D``: ``write 9600h``).
"""

import pytest

from tuner.config.study import MAX_DURATION_S, parse_duration
from tuner.config.yamlfile import ConfigError


def _told(value: str) -> str:
    with pytest.raises(ConfigError) as err:
        parse_duration(value, "s.yaml", "budget.timeout")
    return str(err.value)


@pytest.mark.parametrize("value", ["PT0.0000001S", "PT0.000001S", "P1DT0.000001S", "PT1234567.5S", "P0.1D",
                                   "PT1H0.5M", "1.5d", "P366D", "366d", "PT0.1000H"])
def test_the_hint_is_a_duration_the_parser_takes_with_the_same_time(value):
    told = _told(value)
    written = told.rpartition("write ")[2].split(" ")[0].rstrip(")")
    assert "e" not in written, told
    seconds = parse_duration(written)  # the hint, written as told, is taken
    expected = {"PT0.0000001S": 1e-7, "PT0.000001S": 1e-6, "P1DT0.000001S": 86400.000001,
                "PT1234567.5S": 1234567.5, "P0.1D": 8640.0, "PT1H0.5M": 3630.0, "1.5d": 129600.0,
                "P366D": 366 * 86400.0, "366d": 366 * 86400.0, "PT0.1000H": 360.0}[value]
    assert seconds == pytest.approx(expected, rel=1e-12), told


@pytest.mark.parametrize("value", ["P400D", "P100000D", "400d", "100000d", "P366DT1S"])
def test_more_than_a_year_says_the_year_limit(value):
    assert 366 * 86400 == MAX_DURATION_S
    told = _told(value)
    assert told == f"s.yaml: budget.timeout: {value!r} is longer than a year (the most a study may give: " \
                   "366 days); check the unit", told
