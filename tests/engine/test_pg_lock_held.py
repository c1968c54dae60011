"""Another session holds a lock on Optuna's tables (``LOCK TABLE trials``, a migration, a
transaction left open in psql) on a real PostgreSQL (tuner/engine/pg_sessions.py ``session_settings``,
patience.py, urls.py).

PostgreSQL waits for a lock for ever by default: a worker's storage call raised nothing, so its
patience never started, and it hung in silence, its trial RUNNING (QA, qa106: 30 s and counting at
``TUNER_STORAGE_PATIENCE_S=3``); a read command hung the same way. Every tuner session now sets a
``lock_timeout`` (at most the patience): the wait ends as an outage, said with what is in the way.

Each call under test runs in a thread joined with a generous bound, so the test fails (instead of
hanging) when the wait has no end; the lock is released in ``finally`` either way.
"""

from contextlib import contextmanager

import optuna
import sqlalchemy as sa
from support.bounded_call import in_thread

from tuner.engine.patience import LOCK_HINT, StorageUnavailable
from tuner.engine.storage import driver_url, open_storage


@contextmanager
def table_locked(url: str, table: str = "trials", mode: str = "ACCESS EXCLUSIVE"):
    """Another session holds ``table`` in ``mode`` while the block runs: ACCESS EXCLUSIVE (no read, no
    write), or SHARE (reads go on, writes wait)."""
    engine = sa.create_engine(driver_url(url), poolclass=sa.pool.NullPool)
    conn = engine.connect()
    tx = conn.begin()
    try:
        conn.execute(sa.text(f"LOCK TABLE {table} IN {mode} MODE"))
        yield
    finally:
        tx.rollback()
        conn.close()
        engine.dispose()


def test_a_worker_blocked_by_a_lock_gives_up_after_its_patience_and_reads_once_it_is_released(
        pg_url, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")
    storage = open_storage(pg_url, patient=True)
    study = optuna.create_study(study_name="locked", storage=storage, directions=["maximize"])
    study._storage.create_new_trial(study._study_id)  # a running trial (ask() warns: no optimize)
    with table_locked(pg_url):
        out = in_thread(lambda: study.get_trials(deepcopy=False))
    # before the fix: still waiting for the lock, no error, the patience never started
    assert out, "the storage call waited for the lock with no end"
    error = out.get("error")
    assert isinstance(error, StorageUnavailable), out
    said = str(error)
    assert "did not answer for" in said and "TUNER_STORAGE_PATIENCE_S=2" in said, said
    # the cancellation that names the cause, not the aborted transaction Optuna's retry met
    assert "LockNotAvailable: canceling statement due to lock timeout" in said, said
    assert "InFailedSqlTransaction" not in said and said.endswith(f"({LOCK_HINT})"), said
    password = sa.engine.make_url(pg_url).password
    assert not password or password not in said
    # the lock gone, the same storage reads again: nothing was lost
    assert [t.state for t in study.get_trials(deepcopy=False)] == [optuna.trial.TrialState.RUNNING]
    storage.engine.dispose()


def test_a_read_command_blocked_by_a_lock_says_one_line(pg_url, tmp_path, monkeypatch):
    from click.testing import CliRunner
    from support.faults import study_file

    from tuner.cli import cli

    monkeypatch.setenv("TUNER_STORAGE", pg_url)
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")  # the lock wait of every session: 2 s
    path = study_file(tmp_path, "lockread", 2)
    created = CliRunner().invoke(cli, ["study", "create", str(path)])
    assert created.exit_code == 0, created.output
    with table_locked(pg_url):
        out = in_thread(lambda: CliRunner().invoke(cli, ["study", "status", str(path)]))
    assert out, "study status waited for the lock with no end"  # before the fix
    r = out["value"]
    assert r.exit_code == 2, r.output
    lines = r.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: storage postgresql://"), r.output
    assert "LockNotAvailable: canceling statement due to lock timeout" in lines[0], lines[0]
    assert "Traceback" not in r.output and "Falling back" not in r.output
