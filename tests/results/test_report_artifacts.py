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


def test_a_server_log_is_stored_as_a_copy_capped_at_server_log_max_mb(tmp_path):
    """QA: the artifact store copied a 1.2 GB server log once more. A log over its cap (a server
    that still writes it, or one left uncapped) is stored as its head, a marker and its tail; a log
    under the cap, and every other file, as it is."""
    storage = f"sqlite:///{tmp_path / 's.db'}"
    study = optuna.create_study(storage=storage, study_name="c")
    log, suite = _files(tmp_path)
    lines = b"".join(b"%07d\n" % i for i in range(300_000))
    log.write_bytes(b"startup line\n" + lines + b"last line\n")  # 2.4 MB
    small = log.parent / "small.log"
    small.write_bytes(b"a\nb\n")
    trial = study.ask()
    store_trial_artifacts(study, trial, [str(log), str(suite), str(small)], tmp_path / "wd",
                          caps={str(log): 1, str(small): 1})
    store = artifact_store(tmp_path / "wd")
    got = {}
    for m in get_all_artifact_meta(study.trials[0], storage=study._storage):
        out = tmp_path / f"down-{m.filename}"
        download_artifact(artifact_store=store, artifact_id=m.artifact_id, file_path=str(out))
        got[m.filename] = out.read_bytes()
    assert got["suite.json"] == suite.read_bytes() and got["small.log"] == b"a\nb\n"
    stored = got["server.log"]
    assert len(stored) <= 1 << 20
    assert stored.startswith(b"startup line\n0000000\n") and stored.endswith(b"0299999\nlast line\n")
    assert b"bytes of server output dropped here; server.log_max_mb=1]\n" in stored
    assert log.stat().st_size > 2_000_000  # the log itself is the launcher's to cap, not the store's
