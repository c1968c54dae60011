"""A read command (``open_storage`` without patience: status, pareto, export, ...) on an SQLite file
another process holds locked waits the busy timeout once, then says so in one line. QA: the open
took the held lock for a lost table-creation race and tried five times, each waiting the whole busy
timeout (`tuner study status` said nothing for 5 x 60 s)."""

from __future__ import annotations

import sqlite3

import optuna
import pytest

from tuner.config.yamlfile import ConfigError
from tuner.engine import storage


def test_a_held_lock_is_waited_for_once(tmp_path, monkeypatch):
    db = tmp_path / "s.db"
    url = f"sqlite:///{db}"
    optuna.create_study(study_name="s", storage=url)
    monkeypatch.setattr(storage, "SQLITE_TIMEOUT_S", 1)
    builds = []
    build = storage._build
    monkeypatch.setattr(storage, "_build", lambda *a, **kw: builds.append(a) or build(*a, **kw))
    lock = sqlite3.connect(db, isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(ConfigError) as err:
            storage.open_storage(url, create=False)
    finally:
        lock.execute("COMMIT")
        lock.close()
    assert "database is locked" in str(err.value), err.value
    assert len(builds) == 1, f"{len(builds)} opens, each waiting the busy timeout"
    storage.open_storage(url, create=False)  # the lock gone, the file opens
    assert len(builds) == 2
