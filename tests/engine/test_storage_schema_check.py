"""Optuna's schema check on every open, with its head revision read once per process
(tuner.engine.storage._schema_is_current): a storage in an older schema is still refused with
Optuna's own fix, on the first open of a process and on every later one."""

import sqlite3
from contextlib import closing

import pytest
from optuna.storages import RDBStorage

from tuner.config.yamlfile import ConfigError
from tuner.engine import storage as storage_mod
from tuner.engine.storage import open_storage


def _old_schema(path) -> None:
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE alembic_version SET version_num = 'v3.0.0.d'")


def test_the_head_revision_is_read_once_per_process(tmp_path, monkeypatch):
    reads = []
    head = RDBStorage.get_head_version

    def counted(self):
        reads.append(1)
        return head(self)

    monkeypatch.setattr(RDBStorage, "get_head_version", counted)
    monkeypatch.setattr(storage_mod, "_schema_head", None)
    for i in range(3):
        open_storage(f"sqlite:///{tmp_path / f's{i}.db'}")
        open_storage(f"sqlite:///{tmp_path / f's{i}.db'}", create=False, patient=True)
    assert len(reads) == 1


@pytest.mark.parametrize("head_known", [False, True])
def test_a_storage_in_an_older_schema_is_refused_with_optunas_fix(tmp_path, monkeypatch, head_known):
    path = tmp_path / "old.db"
    open_storage(f"sqlite:///{path}")
    _old_schema(path)
    if not head_known:
        monkeypatch.setattr(storage_mod, "_schema_head", None)
    for patient in (False, True):
        with pytest.raises(ConfigError, match="no longer compatible with the table schema.*optuna storage upgrade"):
            open_storage(f"sqlite:///{path}", create=False, patient=patient)
