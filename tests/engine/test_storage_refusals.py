"""A PostgreSQL that answers but refuses, under a real `tuner study run` on the simulator
(tuner/engine/patience.py, pruning.py, trial.py, tuner/cli/study.py): the database made read-only
mid-trial (a hot standby's refusal, SQLSTATE 25006), then the role's password changed mid-trial.

One worker, one run through both faults, then a rerun:

* read-only is an outage: the worker waits (one ``does not answer`` line) and goes on once the
  database is writable again (QA: it ended at once, "failed during the command", and the
  measurement in flight was lost);
* a password changed is not: the worker stops with one line that names the storage without either
  password and says what fixes it, its measurement in flight journaled (QA: the suite was cut
  before its journal entry, and the line said "a study run rides such outages out");
* the rerun, the password put back, stores the journaled measurement and ends the budget: every
  launch stored once, nothing left running.

And in-process: a command that does not wait (``create``, the read commands) on a server that does
not take the connection says to run it again (QA: "cannot open: ... remaining connection slots are
reserved", and no fix).

The session's own server (support.pg.PgCluster); the superuser reaches it over its socket.
"""

import socket
import subprocess
import sys

import optuna
import pytest
import sqlalchemy as sa
from optuna.trial import TrialState
from support.faults import fault_env, launches_by_trial, start_tuner, study_file, trial_server_up, wait_for
from support.processes import finish

from tuner.config.yamlfile import ConfigError
from tuner.engine.storage import driver_url, open_storage

PASSWORD = "p#ss?w@rd:é%/x"
CHANGED = "n3w#p@ss/wörd"


def test_read_only_is_waited_out_and_a_changed_password_stops_the_run_with_its_measurement_kept(
        pg_cluster, tmp_path):
    url = pg_cluster.database(user="refused", password=PASSWORD)
    db = url.rsplit("/", 1)[1]
    socket = f"host={pg_cluster.dir}/sock&port={pg_cluster.port}"
    su = sa.create_engine(f"postgresql+psycopg2://postgres@/postgres?{socket}", isolation_level="AUTOCOMMIT",
                          poolclass=sa.pool.NullPool)

    def sql(statement: str, **params) -> None:
        with su.connect() as conn:
            conn.execute(sa.text(statement), params)

    def cut_sessions() -> None:  # new sessions see the change: the worker's pooled ones are cut
        sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = 'refused'")

    # two: the first trial through the read-only database, the second through the changed password
    # (the rerun replays it and ends the budget); three cost the rerun a launch more
    budget = 2
    path = study_file(tmp_path, "refusals", budget)
    env = fault_env(TUNER_STORAGE=url, TUNER_STORAGE_PATIENCE_S="300")
    workdir, log = tmp_path / "wd", tmp_path / "run.log"
    proc = start_tuner(["study", "run", str(path), "--workdir", str(workdir)], env, tmp_path, log)
    try:
        first = wait_for(lambda: trial_server_up(workdir), 180, "a trial's server", [proc])
        sql(f'ALTER DATABASE "{db}" SET default_transaction_read_only = on')
        cut_sessions()
        wait_for(lambda: "ReadOnlySqlTransaction" in log.read_text(), 180, "the worker waiting for writes",
                 [proc])
        sql(f'ALTER DATABASE "{db}" RESET default_transaction_read_only')
        wait_for(lambda: trial_server_up(workdir, first), 180, "a later trial's server", [proc])
        sql("ALTER ROLE refused PASSWORD :pw", pw=CHANGED)
        cut_sessions()
        code = proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
        finish(proc)
    out = log.read_text()
    assert code == 2, out[-3000:]
    assert "Traceback" not in out and PASSWORD not in out and CHANGED not in out, out[-3000:]
    assert "refuses writes (ReadOnlySqlTransaction" in out and "answers again" in out, out[-3000:]
    assert "(the database refuses writes: a hot standby, or default_transaction_read_only set" in out, out[-3000:]
    errors = [line for line in out.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, out[-3000:]
    shown = f"postgresql://refused:***@127.0.0.1:{pg_cluster.port}/{db}"
    assert errors[0].startswith(f"error: storage {shown} refused this worker (OperationalError: "), errors[0]
    assert "password authentication failed" in errors[0] and "check the storage URL" in errors[0], errors[0]
    assert "rides such outages out" not in errors[0]
    assert not list((workdir / "servers").glob("*.json")), "the server was left running"
    journaled = sorted((workdir / "journal").glob("*.json"))
    assert (f"journaled in {workdir / 'journal'}" in errors[0]) == bool(journaled), errors[0]

    sql("ALTER ROLE refused PASSWORD :pw", pw=PASSWORD)
    again = subprocess.run([sys.executable, "-m", "tuner", "study", "run", str(path), "--workdir",
                            str(workdir)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    su.dispose()
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    storage = optuna.storages.RDBStorage(driver_url(url))
    trials = optuna.load_study(study_name="refusals", storage=storage).get_trials(deepcopy=False)
    storage.engine.dispose()
    assert not [t.number for t in trials if t.state == TrialState.RUNNING]
    done = [t for t in trials
            if t.state == TrialState.COMPLETE and t.user_attrs.get("status") in ("measured", "failed")]
    assert len(done) == budget, [(t.number, t.state.name, t.user_attrs.get("status")) for t in trials]
    # every launch of both runs is one stored measurement: none lost, none stored twice
    launches = launches_by_trial(workdir)
    assert launches.pop("baseline") == 1
    stored = sorted(t.user_attrs.get("replayed_from", t.number) for t in done)
    assert sorted(int(k) for k in launches) == stored, (launches, out[-2000:], again.stdout[-2000:])
    assert set(launches.values()) == {1}, launches
    assert not list((workdir / "journal").glob("*.json"))


def test_a_command_that_does_not_wait_says_to_run_it_again():
    with socket.socket() as s:  # a port nothing listens on: the connection is refused
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ConfigError) as caught:
        open_storage(f"postgresql://tuner:{PASSWORD}@127.0.0.1:{port}/tuner")
    said = str(caught.value)
    assert "cannot open: OperationalError: " in said and said.endswith(
        "; run it again once the storage answers (`tuner study run` waits for it)"), said
    assert "p#ss" not in said and "%23" not in said, said
