"""The check of the study before a measurement's journal entry (tuner/engine/trial.py, ``record``)
is skipped when the storage is already known to be away (``tuner.engine.patience.unreachable_now``):
it is made inside ``fail_fast``, so it cannot wait for the storage, but on a frozen PostgreSQL its
new connection still costs the connect timeout (10 s) with the measurement in memory alone (QA,
qa154). The pruning judge skips the storage so already (tuner/engine/pruning.py).

A real PostgreSQL (the session's own cluster) stopped as the trial's measurement begins: the first
stage's pruning call fails at once (connection refused) and the storage is known away; from then
until the journal entry no connection of the main thread is tried. Each try is seen as SQLAlchemy's
``do_connect`` event of the storage's own engine (a refused connection costs nothing, so the count,
not the time, is what is checked; a frozen one costs the connect timeout).
"""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Engine
from support.model_study import model_study_yaml

from tuner.config.study import load_study
from tuner.config.suite import load_suite
from tuner.engine.journal import Journal
from tuner.engine.model_backend import ModelBackend
from tuner.engine.patience import StorageUnavailable, unreachable_now
from tuner.engine.runner import run_study
from tuner.engine.study import create_study


def test_no_connection_is_tried_between_a_known_outage_and_the_journal_entry(pg_cluster, tmp_path, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")  # the finish waits this long, then exit 75's error
    path = tmp_path / "away.yaml"
    # one objective the first stage (the probe of single requests) already estimates: the judge asks
    path.write_text(model_study_yaml("away", pg_cluster.database(), 1, noise=0.01, seed=1)
                    + "objectives: [single_speedup]\n")
    config = load_study(path)
    create_study(config, config.storage)

    tries: list[str] = []  # "connect" for each connection tried by the main thread, marks between
    stages: list[int] = []
    away: list[bool] = []

    def connecting(dialect, conn_rec, cargs, cparams):
        if threading.current_thread() is threading.main_thread():
            tries.append("connect")

    class StoppedMidTrial(ModelBackend):
        def measure(self, spec, label, record, on_event=None, on_stage=None):
            if spec is None:  # the baseline: measured and stored as usual
                return super().measure(spec, label, record, on_event=on_event, on_stage=on_stage)
            pg_cluster.stop()  # the server goes away as the trial's server measures

            def judged(i, name, partial):
                verdict = on_stage(i, name, partial)
                stages.append(i)
                away.append(unreachable_now(on_stage.study._storage))  # the judge's call found it away
                tries.append("stage")
                return verdict

            def recorded(m):
                tries.append("record")
                return record(m)

            return super().measure(spec, label, recorded, on_event=on_event, on_stage=judged)

    real_write = Journal.write

    def write(self, entry, stem):
        tries.append("journal")
        return real_write(self, entry, stem)

    monkeypatch.setattr(Journal, "write", write)
    backend = StoppedMidTrial("k2.6-tp8-pcie", load_suite("quick"), noise=0.01, seed=1)
    event.listen(Engine, "do_connect", connecting)
    try:
        with pytest.raises(StorageUnavailable):
            run_study(config, config.storage, backend, n_trials=1)
    finally:
        event.remove(Engine, "do_connect", connecting)
    assert stages and all(away) and "journal" in tries, (away, tries)
    # the first stage's call found the storage away (a try); none after it until the journal entry
    first = tries.index("stage")
    after = tries[first:tries.index("journal", first) + 1]
    assert after[-2:] == ["record", "journal"] and "connect" not in after, (after, tries[first - 3:])
    assert len(Journal(config.workdir).entries("away")) == 1
