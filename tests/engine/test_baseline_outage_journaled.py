"""A baseline measured while PostgreSQL is down past the patience is journaled, not lost.

The baseline's measurement read its study's metric names from the storage (Optuna's
``Study.metric_names``, a waiting call) after the suite and before its journal entry: PostgreSQL
stopped during the baseline's suite, the worker waited there for the patience and exited 75 with
``nothing measured is waiting (journal ... is empty)``; the baseline was measured again by the next
run (QA, qa148: a trial's measurement, struck the same way, was journaled). Now the names are read
before the suite (tuner/engine/trial.py, ``TrialRunner.measure``).

A real ``tuner study run`` on the simulator, the session's own PostgreSQL server (support.pg.PgCluster)
stopped with pg_ctl while the baseline's server runs, then started again for the next run.
"""

from __future__ import annotations

import json

import optuna
import pytest
from optuna.trial import TrialState
from support.faults import fault_zygote, storage_away_during_baseline
from support.zygote import TUNER_CLI

from tuner.engine.storage import driver_url


@pytest.fixture(scope="module")
def zygote(tmp_path_factory):
    z = fault_zygote(tmp_path_factory)  # this file's workers forked from it (support/faults.py)
    yield z
    z.close()


def test_baseline_measured_while_the_storage_is_down_is_journaled_and_replayed(pg_cluster, tmp_path, zygote):
    with storage_away_during_baseline(pg_cluster, tmp_path, "base-outage", "first.log", zygote,
                                             TUNER_STORAGE_PATIENCE_S="3") as outage:
        code = outage.proc.wait(timeout=180)
    path, workdir, env, url = outage.study, outage.workdir, outage.env, outage.url
    out = outage.log.read_text()
    assert code == 75, out[-3000:]
    assert "Traceback" not in out, out[-3000:]
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out[-3000:]
    # before the fix: "nothing measured is waiting (journal .../wd/journal is empty)"
    assert f"1 measurement journaled in {workdir / 'journal'} (baseline 0)" in errors[0], errors[0]
    entries = list((workdir / "journal").glob("*.json"))
    assert len(entries) == 1, entries
    journaled = json.loads(entries[0].read_text())["finish"]
    assert journaled["user_attrs"]["status"] in ("measured", "failed"), journaled["user_attrs"]

    # The database is back: the next run stores the journaled baseline, does not measure it again,
    # and measures the study's trial against it.
    again = zygote.run(TUNER_CLI, ["study", "run", str(path), "--workdir", str(workdir)], env=env,
                       cwd=tmp_path, timeout=300)
    said = again.stdout + again.stderr
    assert "replayed from the journal into the storage: baseline (told)" in said, said[-3000:]
    assert "baseline (autoregressive): launching" not in said, said[-3000:]
    storage = optuna.storages.RDBStorage(driver_url(url))
    try:
        base = optuna.load_study(study_name="base-outage.baseline", storage=storage).get_trials(deepcopy=False)
    finally:
        storage.engine.dispose()
    complete = [t for t in base if t.state == TrialState.COMPLETE]
    assert len(complete) == 1, [(t.number, t.state) for t in base]
    assert complete[0].user_attrs.get("status") == journaled["user_attrs"]["status"]
    assert complete[0].values == journaled["values"]
    if journaled["user_attrs"]["status"] == "measured":  # a loaded machine may fail it as bad_response, rightly
        assert again.returncode == 0, said[-3000:]
