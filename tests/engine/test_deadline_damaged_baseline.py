"""The per-trial deadline from a baseline whose stored suite time is no time (an attribute edited by
hand, a damaged row): passed over for the next figure, else no derived deadline, never a traceback
(QA, qa139: `suite_wall_s: "abc"` ended `tuner study run` in a ValueError from float(), after
`--add-trials` had extended the study)."""

from __future__ import annotations

import pytest
from test_deadline import study

from tuner.engine.deadline import DEADLINE_FACTOR, DEADLINE_FLOOR_S, trial_deadline


@pytest.mark.parametrize("bad", ["abc", float("nan"), float("inf"), -200.0, True, [120.0], {"s": 1}])
def test_a_suite_time_that_is_no_time_is_passed_over(tmp_path, bad):
    config = study(tmp_path)
    startup = config.server.startup_timeout_s
    seconds, why = trial_deadline(config, {"suite_wall_s": bad, "duration_s": 200.0})
    assert seconds == startup + max(DEADLINE_FLOOR_S, DEADLINE_FACTOR * 200.0), why
    assert "200 s" in why
    seconds, why = trial_deadline(config, {"suite_wall_s": bad, "duration_s": bad})
    assert seconds is None and "unknown" in why, why
