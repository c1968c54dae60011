"""Per-trial files as Optuna artifacts: what optuna-dashboard reads with --artifact-dir."""

import json

import optuna
from optuna.artifacts import download_artifact, get_all_artifact_meta

from tuner.engine.artifacts import artifact_dir, artifact_store, store_trial_artifacts


def _files(tmp_path):
    log = tmp_path / "trials" / "0" / "server.log"
    log.parent.mkdir(parents=True)
    log.write_text("server ready\nNot enough memory\n")
    suite = log.parent / "suite.json"
    suite.write_text(json.dumps({"single_tok_per_s": 41.2}))
    return log, suite


def test_running_trial_gets_its_log_and_suite_json(tmp_path):
    storage = f"sqlite:///{tmp_path / 's.db'}"
    study = optuna.create_study(storage=storage, study_name="a")
    log, suite = _files(tmp_path)
    trial = study.ask()
    ids = store_trial_artifacts(study, trial, [str(log), str(suite), str(tmp_path / "missing.json"), None],
                                tmp_path / "wd")
    assert len(ids) == 2
    study.tell(trial, 1.0)
    # read back as optuna-dashboard does: from the storage, then the store folder
    again = optuna.load_study(study_name="a", storage=storage)
    metas = get_all_artifact_meta(again.trials[0], storage=again._storage)
    assert {m.filename: m.mimetype for m in metas} == {"server.log": "text/plain", "suite.json": "application/json"}
    store = artifact_store(tmp_path / "wd")
    for m in metas:
        out = tmp_path / f"down-{m.filename}"
        download_artifact(artifact_store=store, artifact_id=m.artifact_id, file_path=str(out))
        assert out.read_bytes() == (log if m.filename == "server.log" else suite).read_bytes()
    assert sorted(p.name for p in artifact_dir(tmp_path / "wd").iterdir()) == sorted(ids)


def test_finished_trial_by_id_attaches_to_the_study(tmp_path):
    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 's.db'}", study_name="b")
    log, _ = _files(tmp_path)
    trial = study.ask()
    study.tell(trial, 1.0)
    ids = store_trial_artifacts(study, trial._trial_id, [log], tmp_path / "wd")
    assert len(ids) == 1
    assert get_all_artifact_meta(study.trials[0], storage=study._storage) == []
    assert [m.filename for m in get_all_artifact_meta(study)] == ["trial-0-server.log"]
