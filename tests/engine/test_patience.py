"""A storage that rides out outages (tuner/engine/patience.py) on a real SQLite file: what counts as
an outage, a finish whose commit landed but whose reply was lost, an outage longer than the
patience, and the reaper holding back after an outage (a subprocess with a 1 s heartbeat)."""

import os
import sqlite3
import subprocess
import sys
import textwrap

import optuna
import pytest
import sqlalchemy
from optuna.storages import RDBStorage
from optuna.trial import TrialState

from tuner.engine.asktell import ask, tell
from tuner.engine.patience import (PatientRDBStorage, StorageUnavailable, fail_fast, is_transient, storage_stop_line,
                                   unreachable_now)
from tuner.engine.storage import open_storage


def db_error(message: str, driver_error: Exception) -> sqlalchemy.exc.OperationalError:
    return sqlalchemy.exc.OperationalError("SELECT 1", {}, driver_error)


def test_what_counts_as_an_outage():
    assert is_transient(db_error("", sqlite3.OperationalError("database is locked")))
    assert is_transient(db_error("", sqlite3.OperationalError("attempt to write a readonly database")))
    assert is_transient(db_error("", sqlite3.OperationalError("unable to open database file")))
    assert not is_transient(db_error("", sqlite3.OperationalError("no such column: foo")))
    # PostgreSQL: its OperationalError is the server or the connection (refused, shutting down)
    assert is_transient(db_error("", Exception("the database system is shutting down")))
    # Optuna wraps SQLAlchemy's errors; the cause counts
    wrapped = optuna.exceptions.StorageInternalError("An exception is raised during the commit")
    wrapped.__cause__ = db_error("", sqlite3.OperationalError("database is locked"))
    assert is_transient(wrapped)
    assert not is_transient(ValueError("bad value")) and not is_transient(KeyError("no such study"))
    assert not is_transient(StorageUnavailable("x", 1.0, "y"))
    # PostgreSQL saying the URL is wrong (credentials, database, role): no wait makes it right, the
    # worker stops at once (mutation testing: treating every non-SQLite OperationalError as an outage
    # passed every test)
    for said in ("FATAL:  password authentication failed for user \"tuner\"",
                 "FATAL:  database \"nightly\" does not exist", "no pg_hba.conf entry for host"):
        assert not is_transient(db_error("", Exception(said))), said


def test_a_stopped_worker_s_line_names_the_url_and_the_role_only_when_they_are_what_is_wrong(tmp_path):
    """A refused login names the URL and the role's rights as the fix; any other error of the
    database's does not (QA: an SQLite file overwritten mid-run, "file is not a database", said
    "check the storage URL (its password, role and database)")."""
    refused = db_error("", Exception('FATAL:  password authentication failed for user "tuner"'))
    line = storage_stop_line(refused, "postgresql://tuner:s3cret@db/tuner")
    assert "refused this worker" in line and "check the storage URL" in line and "s3cret" not in line, line
    (tmp_path / "c.db").write_bytes(b"garbage!" * 512)
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'c.db'}")
    with pytest.raises(sqlalchemy.exc.DatabaseError) as corrupt:
        with engine.connect() as conn:
            conn.execute(sqlalchemy.text("SELECT * FROM trials"))
    engine.dispose()
    assert not is_transient(corrupt.value)
    line = storage_stop_line(corrupt.value, f"sqlite:///{tmp_path / 'c.db'}")
    assert "file is not a database" in line and "fix what the database says" in line, line
    assert "refused" not in line and "password" not in line and "role" not in line, line
    with pytest.raises(ValueError):  # not the database's: raised again, as it is
        storage_stop_line(ValueError("bad value"), "sqlite:///x.db")


@pytest.fixture
def study(tmp_path):
    storage = open_storage(f"sqlite:///{tmp_path / 'p.db'}", patient=True)
    assert isinstance(storage, PatientRDBStorage)
    s = optuna.create_study(study_name="p", storage=storage, directions=["maximize", "maximize"])
    yield s
    storage.engine.dispose()


def test_a_tell_whose_commit_landed_before_the_connection_broke_is_done(study, monkeypatch):
    original = RDBStorage.set_trial_state_values
    broke = []

    def commit_then_break(self, trial_id, state, values=None):
        done = original(self, trial_id, state, values)
        if state.is_finished() and not broke:
            broke.append(trial_id)
            raise db_error("COMMIT", Exception("server closed the connection unexpectedly"))
        return done

    monkeypatch.setattr(RDBStorage, "set_trial_state_values", commit_then_break)
    trial = ask(study)
    tell(study, trial, [1.5, 2.5])  # retried: finds its own values there, and is done
    assert broke == [trial._trial_id]
    stored = study._storage.get_trial(trial._trial_id)
    assert stored.state == TrialState.COMPLETE and stored.values == [1.5, 2.5]
    # A trial someone else finished differently is not "done" for us: that error stands.
    other = ask(study)
    study._storage.set_trial_state_values(other._trial_id, TrialState.FAIL)
    with pytest.raises(optuna.exceptions.UpdateFinishedTrialError):
        study._storage.set_trial_state_values(other._trial_id, TrialState.COMPLETE, [1.0, 1.0])


def test_a_tell_retried_after_another_worker_finished_the_trial_otherwise_is_not_done(study, monkeypatch):
    """The connection broke before this tell committed, and meanwhile another worker failed the trial
    (judged dead): the retry meets a finished trial in ANOTHER state, and that error stands -- the
    tell is not "done" (mutation testing: taking any finished trial after a failed try as our own
    finish passed every test)."""
    original = RDBStorage.set_trial_state_values
    broke = []

    def others_finish_then_break(self, trial_id, state, values=None):
        if state == TrialState.COMPLETE and not broke:
            broke.append(trial_id)
            original(self, trial_id, TrialState.FAIL)  # another worker, meanwhile
            raise db_error("COMMIT", Exception("server closed the connection unexpectedly"))
        return original(self, trial_id, state, values)

    monkeypatch.setattr(RDBStorage, "set_trial_state_values", others_finish_then_break)
    trial = ask(study)
    with pytest.raises(optuna.exceptions.UpdateFinishedTrialError):
        study._storage.set_trial_state_values(trial._trial_id, TrialState.COMPLETE, [1.5, 2.5])
    assert broke == [trial._trial_id]
    assert study._storage.get_trial(trial._trial_id).state == TrialState.FAIL


def test_an_outage_longer_than_the_patience_raises_storage_unavailable(study, tmp_path, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")
    trial = ask(study)
    (tmp_path / "p.db").rename(tmp_path / "p.db.aside")
    with pytest.raises(StorageUnavailable) as err:
        study._storage.set_trial_user_attr(trial._trial_id, "k", 1)
    assert f"storage sqlite:///{tmp_path / 'p.db'} did not answer" in str(err.value)
    assert "is not there" in str(err.value)
    # back again: the same storage object goes on, and the write lands
    (tmp_path / "p.db.aside").rename(tmp_path / "p.db")
    study._storage.set_trial_user_attr(trial._trial_id, "k", 2)
    assert study._storage.get_trial(trial._trial_id).user_attrs["k"] == 2


def test_within_fail_fast_an_outage_raises_at_once(study, tmp_path, monkeypatch):
    # The pruning decision between two stages of a suite must not hold a measuring server up.
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "600")
    trial = ask(study)
    (tmp_path / "p.db").rename(tmp_path / "p.db.aside")
    with fail_fast(), pytest.raises(StorageUnavailable):
        study._storage.set_trial_user_attr(trial._trial_id, "k", 1)  # would wait 600 s otherwise
    assert unreachable_now(study._storage)
    (tmp_path / "p.db.aside").rename(tmp_path / "p.db")
    study._storage.set_trial_user_attr(trial._trial_id, "k", 2)  # patient again outside the block
    assert study._storage.get_trial(trial._trial_id).user_attrs["k"] == 2 and not unreachable_now(study._storage)


REAPER = textwrap.dedent("""
    import sys, time
    import optuna
    from tuner.engine.asktell import ask
    from tuner.engine.patience import fail_fast
    from tuner.engine.storage import open_storage
    from tuner.engine.workers import reap_dead_trials

    db = sys.argv[1]
    storage = open_storage(f"sqlite:///{db}", patient=True)
    study = optuna.create_study(study_name="r", storage=storage)
    trial = ask(study, {"x": optuna.distributions.IntDistribution(0, 9)})
    trial.set_user_attr("worker", {"host": "another-node", "pid": 1, "start": 1})
    storage.record_heartbeat(trial._trial_id)
    time.sleep(3.5)  # its heartbeat is stale now (grace 2 s)
    import os
    os.rename(db, db + ".aside")
    try:
        with fail_fast():  # as the heartbeat thread beats
            storage.record_heartbeat(trial._trial_id)  # this process sees the outage (the beat fails at once)
    except Exception:
        pass
    os.rename(db + ".aside", db)
    print("just after:", reap_dead_trials(study), study.trials[0].state.name)
    time.sleep(3.5)  # grace + interval after the outage
    print("later:", reap_dead_trials(study), study.trials[0].state.name)
""")


def test_after_an_outage_nobody_is_judged_dead_by_heartbeat_until_a_grace_period_passes(tmp_path):
    env = {**os.environ, "TUNER_HEARTBEAT_INTERVAL_S": "1", "TUNER_HEARTBEAT_GRACE_S": "2",
           "TUNER_STORAGE_PATIENCE_S": "30"}
    done = subprocess.run([sys.executable, "-c", REAPER, str(tmp_path / "r.db")], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert lines[0] == "just after: [] RUNNING", done.stdout
    assert lines[1] == "later: [] FAIL", done.stdout  # failed by Optuna's stale check, queued again


def test_optuna_s_fallback_warning_is_dropped_during_an_outage_only(tmp_path, capfd):
    # Optuna reads any OperationalError of its trial query as "too many SQL variables", warns
    # (optuna/storages/_rdb/storage.py, _get_trials) and queries again. When the database went down
    # between its two queries (a race QA hit on a PostgreSQL restart) that warning came before
    # the tuner's own outage line. The error here is a real one, from a real locked SQLite file.
    open_storage(f"sqlite:///{tmp_path / 'q.db'}")  # installs the filter, as every command does
    lock = sqlite3.connect(tmp_path / "q.db", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    engine = sqlalchemy.create_engine(f"sqlite:///{tmp_path / 'q.db'}", connect_args={"timeout": 0.1})
    with pytest.raises(sqlalchemy.exc.OperationalError) as locked:
        with engine.connect() as conn:
            conn.execute(sqlalchemy.text("SELECT * FROM trials"))
    lock.execute("COMMIT")
    lock.close()
    engine.dispose()
    logger = optuna.logging.get_logger("optuna.storages._rdb.storage")
    for error in (locked.value, "(psycopg2.OperationalError) server closed the connection unexpectedly",
                  # a PostgreSQL restart, as SQLAlchemy renders psycopg2's subclasses (QA, second pass)
                  "(psycopg2.errors.AdminShutdown) terminating connection due to administrator command",
                  "(psycopg2.errors.CannotConnectNow) FATAL:  the database system is starting up"):
        logger.warning(f"Caught an error from sqlalchemy: {error!s}. Falling back to a slower alternative.")
    assert "Caught an error" not in capfd.readouterr().err
    # Not an outage: still Optuna's to say.
    logger.warning("Caught an error from sqlalchemy: (sqlite3.OperationalError) too many SQL variables. "
                   "Falling back to a slower alternative.")
    logger.warning("something else")
    err = capfd.readouterr().err
    assert "too many SQL variables" in err and "something else" in err


PATIENCE_UNDER_A_LOCK = textwrap.dedent("""
    import sqlite3, sys
    from tuner.engine.patience import StorageUnavailable
    from tuner.engine.storage import open_storage
    url = "sqlite:///" + sys.argv[1]
    open_storage(url).create_new_study([], "s")  # the storage exists, as a running worker's does
    storage = open_storage(url, patient=True)
    lock = sqlite3.connect(sys.argv[1], isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")  # another connection's lock, held past the patience
    for what, call in (("call", lambda: storage.set_study_user_attr(0, "k", "v")),
                       ("open", lambda: open_storage(url, patient=True))):
        try:
            call()
            print(what, "answered")
        except StorageUnavailable as exc:
            print(what, "gave up after", round(exc.waited_s), "s:", exc)
    lock.execute("COMMIT")
""")


def test_patience_bounds_a_call_on_a_locked_sqlite_file_not_the_busy_timeout(tmp_path):
    # QA: TUNER_STORAGE_PATIENCE_S=5 with the default 60 s busy timeout gave up after 58 s: each
    # try blocked for the whole busy timeout, and the patience was counted from the first failure.
    # Here the busy timeout (900 s) is far past the hang guard, and the lock is never let go: only
    # the patience (2 s) can end the call and the open, as StorageUnavailable.
    env = {**os.environ, "TUNER_STORAGE_PATIENCE_S": "2", "TUNER_SQLITE_TIMEOUT_S": "900"}
    done = subprocess.run([sys.executable, "-c", PATIENCE_UNDER_A_LOCK, str(tmp_path / "l.db")],
                          capture_output=True, text=True, env=env, timeout=240)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert len(lines) == 2, done.stdout
    for what, line in zip(("call", "open"), lines):
        assert line.startswith(f"{what} gave up after "), line
        assert "TUNER_STORAGE_PATIENCE_S=2" in line and "database is locked" in line, line
        waited = int(line.split("after ")[1].split(" ")[0])
        assert waited < 900, line  # the patience ended it, not the busy timeout running out


def test_a_patient_open_leaves_a_lock_to_the_patience_not_to_the_table_creation_retries(monkeypatch):
    # The retries of a lost table-creation race (a "locked" among them) ran after the patience had
    # passed: a patient open on a locked file gave up 2 s past TUNER_STORAGE_PATIENCE_S=3. A patient
    # open leaves a lock to open_patiently (retried within the patience); another open retries it.
    from tuner.engine import storage as st

    calls = []

    def locked(url, patient):
        calls.append(patient)
        raise db_error("", sqlite3.OperationalError("database is locked"))

    monkeypatch.setattr(st, "_build", locked)
    monkeypatch.setattr(st.time, "sleep", lambda s: None)
    for patient, tries in ((True, 1), (False, st._CREATE_ATTEMPTS)):
        calls.clear()
        with pytest.raises(sqlalchemy.exc.OperationalError):
            st._build_with_retry("sqlite:///x.db", patient)
        assert len(calls) == tries, (patient, calls)
