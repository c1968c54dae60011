"""A read's storage whose PostgreSQL server froze between two of its calls (every process of the
cluster stopped with SIGSTOP, as a paused VM is) fails the next call within the reply bound and a
connect timeout, with the storage's error, instead of waiting for the thaw.

QA (qa183): the pool's pre-ping of the connection the first call used (pool_pre_ping; SQLAlchemy's
``do_ping`` runs no cursor events) waited with no end: ``open_storage(url, create=False)``, one
``get_all_studies()``, the cluster frozen, then the second ``get_all_studies()`` still waiting 60 s
later at ``TUNER_STORAGE_PATIENCE_S=3`` (bound 13 s).
"""

import threading

from test_pg_frozen_session import all_frozen

from tuner.engine.storage import open_storage, storage_failure_line


def test_a_read_call_after_the_server_froze_ends(pg_cluster, monkeypatch):
    monkeypatch.setenv("TUNER_STORAGE_PATIENCE_S", "2")  # the ping's bound 12 s, connect_timeout 2 s
    url = pg_cluster.database()
    open_storage(url).engine.dispose()  # the tables: a study's database
    storage = open_storage(url, create=False)  # as a read command opens it
    assert storage.get_all_studies() == []  # a pooled connection, which the next call pre-pings
    outcome: list[BaseException | object] = []

    def call():
        try:
            outcome.append(storage.get_all_studies())
        except BaseException as exc:  # noqa: BLE001 - the outcome is the test's
            outcome.append(exc)

    with all_frozen(pg_cluster):
        worker = threading.Thread(target=call, daemon=True)
        worker.start()
        worker.join(45)  # all_frozen thaws at 60 s: the bug ends with the thaw, and a list of studies
        ended_frozen = not worker.is_alive()
    worker.join(30)
    storage.engine.dispose()
    assert ended_frozen, "the call still waited on the frozen server"
    assert len(outcome) == 1 and isinstance(outcome[0], BaseException), outcome
    line = storage_failure_line(outcome[0])  # what the read command says of it, one line
    assert line is not None and line.startswith("storage postgresql://"), line
    assert "timeout expired" in line or "NoReply: no reply within 12 s" in line, line
