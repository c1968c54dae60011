"""A PostgreSQL server that takes a connection but never answers it (its postmaster frozen with
SIGSTOP, as a paused VM or a server swapped to death is), under a worker whose sessions were cut
(tuner/engine/urls.py ``connect_args``).

libpq waits for a connection with no end by default: the worker's reconnect hung past its patience,
no line, its trial RUNNING (QA, qa106: 25 s and counting at ``TUNER_STORAGE_PATIENCE_S=3``). With a
``connect_timeout`` the attempt ends as an outage: waited out within the patience, then one line.

The session's own server (support.pg.PgCluster): only a server this session started is frozen, and
it is thawed (SIGCONT) in ``finally`` whatever happens.
"""

import os
import signal
from contextlib import contextmanager

import optuna
import sqlalchemy as sa
from support.bounded_call import in_thread

from tuner.engine.patience import StorageUnavailable
from tuner.engine.storage import open_storage
from tuner.engine.urls import connect_args


@contextmanager
def frozen(cluster):
    """The cluster's postmaster stopped (SIGSTOP) while the block runs: no new session is answered."""
    pid = int((cluster.dir / "data" / "postmaster.pid").read_text().split()[0])
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def test_a_reconnect_to_a_frozen_server_is_an_outage_with_an_end(pg_cluster, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "3")
    url = pg_cluster.database()
    storage = open_storage(url, patient=True)
    study = optuna.create_study(study_name="frozen", storage=storage, directions=["maximize"])
    su = sa.create_engine(f"postgresql+psycopg2://postgres@/postgres?host={pg_cluster.dir}/sock"
                          f"&port={pg_cluster.port}", isolation_level="AUTOCOMMIT",
                          poolclass=sa.pool.NullPool)
    with su.connect() as conn:  # the worker's sessions cut: its next call must connect anew
        conn.execute(sa.text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :d"),
                     {"d": url.rsplit("/", 1)[1]})
    su.dispose()
    with frozen(pg_cluster):
        out = in_thread(lambda: study.get_trials(deepcopy=False))
    # before the fix: still connecting, no error, the patience never started
    assert out, "the reconnect waited for the frozen server with no end"
    error = out.get("error")
    assert isinstance(error, StorageUnavailable), out
    assert "TUNER_STORAGE_PATIENCE_S=3" in str(error) and "timeout expired" in str(error), error
    assert study.get_trials(deepcopy=False) == []  # thawed: the same storage reads again
    storage.engine.dispose()


def test_the_write_probe_of_doctor_and_run_gives_up_on_a_frozen_server(pg_cluster, monkeypatch):
    # `tuner doctor` and the checks `tuner study run` makes before it starts (tuner.engine.doctor)
    from tuner.engine.storage_probe import sql_writable

    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")
    url = pg_cluster.database()
    with frozen(pg_cluster):
        out = in_thread(lambda: sql_writable(url))
    assert out, "the write probe waited for the frozen server with no end"  # before the fix
    assert "timeout expired" in str(out.get("error")), out
    assert isinstance(sql_writable(url), list)  # thawed: the probe answers again (it raised while frozen)


def test_a_connect_timeout_in_the_url_is_the_users():
    assert connect_args("postgresql://u@db/x?connect_timeout=30", 600) == {}
    assert connect_args("sqlite:///x.db", 600) == {}
    assert connect_args("postgresql://u:p@db/x", 600) == {"connect_timeout": 10}
    assert connect_args("postgresql://u:p@db/x", 3) == {"connect_timeout": 3}  # at most the patience
