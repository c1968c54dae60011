"""`tuner study report` on a study where every feasible measurement has the same value of one
objective (identical points, edited by hand or a flat landscape): Optuna's PED-ANOVA has nothing to
rank there. The page says so in place of the chart, and nothing is printed on stderr.

QA, qa177: four "UserWarning: Target and region quantiles select the same set of trials. Parameter
importances will be equal." blocks on stderr (the HTML and the PNG chart of each tied objective's
importances) and a chart of equal bars with no word why.
"""

import sqlite3
import warnings

from support.model_study import make_model_study
from test_report import figures_of

from tuner.config.study import load_study
from tuner.engine.study import open_study
from tuner.results.report import write_report


def test_a_tied_objective_gets_a_note_not_an_importance_chart_or_a_warning(tmp_path):
    config = load_study(make_model_study(tmp_path, "tied", n_trials=5))
    db = sqlite3.connect(config.storage.removeprefix("sqlite:///"))
    with db:  # every trial of the study (not its baseline) gets speedup@32 = 0.5
        tied = db.execute("UPDATE trial_values SET value = 0.5 WHERE objective = 1 AND trial_id IN (SELECT "
                          "trial_id FROM trials JOIN studies USING (study_id) WHERE study_name = 'tied')").rowcount
    db.close()
    assert tied >= 4
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        files = write_report(open_study("tied", config.storage), tmp_path / "r.html", tmp_path / "png")
    said = [str(w.message) for w in caught if "importances" in str(w.message).lower()]
    assert said == [], said
    page = files.html.read_text(encoding="utf-8")
    figs = figures_of(page)
    assert "importance_single_speedup" in figs and "importance_speedup_32" not in figs
    assert ("Parameter importances for speedup@32: every feasible measured trial has the same speedup@32 "
            "(0.500), so no flag can be ranked by it.") in page
    pngs = {p.name for p in files.pngs}
    assert "importance_single_speedup.png" in pngs and "importance_speedup_32.png" not in pngs
