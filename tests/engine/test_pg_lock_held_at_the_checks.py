"""The storage check of `tuner doctor` and of `tuner study run`'s checks before it starts
(tuner.engine.doctor.check_storage, tuner.engine.storage_probe.sql_writable) ends its wait for a lock
another session holds on the study's tables, as every other session of the tuner does
(tuner.engine.pg_sessions.session_settings), and says what is in the way.

QA, qa205: the probe's own engine set no lock_timeout: with ``LOCK TABLE trials IN SHARE MODE`` held
(what ``CREATE INDEX`` takes; reads go on, writes wait), its ``INSERT ... WHERE false`` waited as long
as the lock was held, `tuner doctor` and `tuner study run` silent meanwhile (45 s of a 45 s lock at
``TUNER_STORAGE_PATIENCE_S=8``; a transaction left open in psql: for ever), then said "reachable and
writable". A real PostgreSQL; the check runs in a thread with a bound, so the test fails instead of
hanging."""


import sqlalchemy as sa
from support.bounded_call import in_thread
from support.cli_in_process import tuner_here
from support.demo_study import demo_study
from test_pg_lock_held import table_locked

from tuner.config.study import load_study
from tuner.engine.doctor import FAIL, PASS, WARN, check_storage
from tuner.engine.patience import LOCK_HINT

#: Far past the lock wait the test sets (2 s), on a loaded machine; far short of the lock's hold.
BOUND_S = 40


def test_the_storage_check_ends_its_wait_for_a_lock_and_names_it(tmp_path, pg_url, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")  # the lock wait of every session: 2 s
    path = demo_study(tmp_path, storage=pg_url)
    created = tuner_here("study", "create", str(path), cwd=tmp_path)
    assert created.exit_code == 0, created.stdout + created.stderr
    config = load_study(path)
    with table_locked(pg_url, mode="SHARE"):  # reads go on, writes wait
        doctor = in_thread(lambda: check_storage(config), BOUND_S)
        run = in_thread(lambda: check_storage(config, outage_ok=True), BOUND_S)
    # before the fix: both still waiting for the lock when the bound ran out
    assert doctor and run, "the storage check waited for the lock with no end"
    c = doctor["value"]
    assert c.status == FAIL and "LockNotAvailable" in c.message and LOCK_HINT in c.message, c
    assert len(c.message.splitlines()) == 1, c
    c = run["value"]  # study run's check: the run itself waits out the lock, within its patience
    assert c.status == WARN and LOCK_HINT in c.message and c.message.endswith("the run waits for it"), c
    password = sa.engine.make_url(pg_url).password
    assert not password or password not in doctor["value"].message + c.message
    # the lock gone, the same check passes (a warning of fsync=off is the test server's own)
    c = check_storage(config)
    assert c.status in (PASS, WARN) and "reachable and writable" in c.message, c
