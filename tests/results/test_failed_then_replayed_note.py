"""A trial another worker failed after its own worker wrote its figures and stopped before telling:
the figures, replayed from the journal, are a trial of their own, and the failed trial's note names
it (QA, qa136: status showed the failed trial with "lossless 100%" and no word of where its
measurement went)."""

import optuna
from optuna.trial import TrialState, create_trial

from tuner.engine.records import load_records
from tuner.results.status import ended_note


def test_the_failed_trials_note_names_where_its_measurement_went():
    study = optuna.create_study(directions=["maximize", "maximize"])
    dist = {"x": optuna.distributions.IntDistribution(1, 8)}
    figures = {"lossless_share": 1.0, "worker": {"host": "node-b", "pid": 41}}
    study.add_trial(create_trial(state=TrialState.FAIL, params={"x": 3}, distributions=dist, user_attrs=figures))
    study.add_trial(create_trial(state=TrialState.COMPLETE, params={"x": 3}, distributions=dist, values=[1.2, 1.1],
                                 user_attrs={"status": "measured", "replayed_from": 0, "lossless_share": 1.0,
                                             "effective": {"num_steps": 3, "eagle_topk": 1, "num_draft_tokens": 4}}))
    records = load_records(study)
    note = ended_note(records[0], records)
    assert "stopped answering" in note and "its measurement is stored as trial 1" in note, note
    assert ended_note(records[1], records) is None


def test_status_shows_no_lossless_share_beside_a_failed_trial(tmp_path):
    import json
    import sqlite3

    from click.testing import CliRunner
    from support.model_study import make_model_study

    from tuner.cli import cli

    path = make_model_study(tmp_path, n_trials=4)
    db = sqlite3.connect(tmp_path / "demo.db")
    with db:
        (trial_id,) = db.execute("SELECT trial_id FROM trials t JOIN studies s USING (study_id) "
                                 "WHERE s.study_name = 'demo' AND t.number = 0").fetchone()
        # a trial whose worker wrote its figures (a lossless share among them) and died before its
        # tell, failed by another worker's heartbeat check
        db.execute("UPDATE trials SET state = 'FAIL' WHERE trial_id = ?", (trial_id,))
        db.execute("DELETE FROM trial_values WHERE trial_id = ?", (trial_id,))
        db.execute("INSERT INTO trial_user_attributes (trial_id, key, value_json) VALUES (?, 'lossless_share', ?)",
                   (trial_id, json.dumps(0.97)))
    db.close()
    r = CliRunner().invoke(cli, ["study", "status", str(path)])
    assert r.exit_code == 0, r.output
    (row,) = [line for line in r.output.splitlines() if line.lstrip("│ ").startswith("0 ")]
    assert "FAIL" in row and "97%" not in row, row
