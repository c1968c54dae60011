"""``export --adaptive`` of a study that has measured nothing yet (every trial pruned, failed or
stopped, or none at all beside the baseline) says so and what to run, not that the search space
lacks topk 1 (QA: "add topk 1 to the search space" for a study of 116 pruned trials on the shipped
space, which holds topk 1; tuner/results/adaptive.py, _no_topk1_reason)."""

from __future__ import annotations

import sqlite3

from support.cli_in_process import tuner_here
from support.model_study import make_model_study


def test_adaptive_of_a_study_with_no_measured_trial(tmp_path):
    path = make_model_study(tmp_path, "ad", n_trials=4)
    con = sqlite3.connect(tmp_path / "ad.db")
    try:
        with con:  # every trial stopped without a result (its worker died), the baseline kept
            failed = con.execute("UPDATE trials SET state = 'FAIL' WHERE study_id = "
                                 "(SELECT study_id FROM studies WHERE study_name = 'ad')").rowcount
    finally:
        con.close()
    assert failed > 0
    r = tuner_here("study", "export", str(path), "--adaptive")
    assert r.exit_code == 1, r.output
    assert r.stderr.count("\n") == 1, r.stderr
    assert f"has no measured trial yet ({failed} fail)" in r.stderr and "tuner study run" in r.stderr, r.stderr
    assert "search space" not in r.stderr, r.stderr
