"""A PostgreSQL server that freezes under a session already open (every process of the cluster
stopped with SIGSTOP, as a paused VM or a server swapped to death is): the call waiting for its
reply is cut (tuner/engine/reply_watch.py) and waited out as an outage, instead of waiting with no
end (QA: the call sat past its patience in silence; libpq has no timeout for a query's reply).

The session's own server (support.pg.PgCluster): only a server this session started is frozen, and
every process is thawed (SIGCONT) in ``finally`` and by a timer, whatever happens.
"""

import os
import signal
import threading
from contextlib import contextmanager

import optuna
import psutil
import pytest

from tuner.engine.patience import StorageUnavailable
from tuner.engine.storage import open_storage

#: When the timer thaws the server if the call is still waiting (the bug): far past the 10 s bound.
THAW_S = 60


@contextmanager
def all_frozen(cluster):
    """Every process of the cluster (the postmaster and its backends) stopped while the block runs,
    thawed after :data:`THAW_S` at the latest."""
    pid = int((cluster.dir / "data" / "postmaster.pid").read_text().split()[0])
    pids = [pid] + [p.pid for p in psutil.Process(pid).children(recursive=True)]

    def thaw():
        for p in pids:
            try:
                os.kill(p, signal.SIGCONT)
            except ProcessLookupError:
                pass

    for p in pids:
        os.kill(p, signal.SIGSTOP)
    timer = threading.Timer(THAW_S, thaw)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        thaw()


def test_a_call_on_a_session_whose_server_froze_is_cut_and_waited_out(pg_cluster, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")  # a reply waited for 10 s (the floor), then cut
    storage = open_storage(pg_cluster.database(), patient=True)
    study = optuna.create_study(study_name="frozen-session", storage=storage, directions=["maximize"])
    assert study.get_trials(deepcopy=False) == []  # a pooled session is open to the server
    heard: list[tuple[str, dict]] = []
    storage.on_outage = lambda kind, info: heard.append((kind, info))
    with all_frozen(pg_cluster):
        # on the main thread, as a worker's calls are (the outage line is the main thread's)
        with pytest.raises(StorageUnavailable) as raised:
            study.get_trials(deepcopy=False)  # before the fix: waited until the timer thawed the server
    assert "TUNER_STORAGE_PATIENCE_S=2" in str(raised.value), raised.value
    # the first failure is the cut, said as what it is (not "server closed the connection")
    assert heard and heard[0][0] == "storage_down", heard
    assert heard[0][1]["error"].startswith("NoReply: no reply within 10 s"), heard[0][1]
    assert study.get_trials(deepcopy=False) == []  # thawed: the same storage reads again
    storage.engine.dispose()
