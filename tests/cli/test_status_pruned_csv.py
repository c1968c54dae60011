"""`tuner study status -f csv` tells a pruned launch from a repeat of a pruned setting that launched
nothing (``pruned_from``), as the table and JSON do."""

from __future__ import annotations

import optuna
from optuna.trial import TrialState, create_trial

from tuner.cli.study import status_rows
from tuner.engine.records import MEASURED, PRUNED
from tuner.results.status import study_status

SETTING = {"num_steps": 4, "eagle_topk": 4, "num_draft_tokens": 32}


def test_a_repeat_of_a_pruned_setting_names_the_trial_that_pruned_it():
    """QA: a repeat of a pruned setting (no launch) read in the CSV as `pruned,...,single 1/3,` --
    a launch stopped after single 1/3 by no trial; the table said `= trial 19 (pruned, not launched
    again)`. The CSV now has a pruned_from column."""
    study = optuna.create_study(directions=["maximize", "maximize"])
    study.set_metric_names(["single_speedup", "speedup@32"])
    study.add_trial(create_trial(values=[3.0, 0.3], user_attrs={
        "status": MEASURED, "effective_key": "a", "effective": {**SETTING, "num_steps": 5}},
        system_attrs={"constraints": [0.0]}))
    pruned = {"status": PRUNED, "effective_key": "b", "effective": SETTING, "pruned_at": "single 1/3"}
    study.add_trial(create_trial(state=TrialState.PRUNED, user_attrs={**pruned, "pruned_by": 0}))
    study.add_trial(create_trial(state=TrialState.PRUNED, user_attrs={**pruned, "pruned_from": 1}))
    columns, rows = status_rows(study_status(study))
    got = {row[0]: dict(zip(columns, row)) for row in rows}
    assert got[1]["pruned_by"] == 0 and got[1]["pruned_from"] is None
    assert got[2]["pruned_from"] == 1 and got[2]["pruned_by"] is None
